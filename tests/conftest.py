import sys
from pathlib import Path

from hypothesis import settings

import srcad.transform.settle as settle

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
sys.path.insert(0, str(Path(__file__).parent / "runtime"))

settings.register_profile("srcad", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("srcad")

# every function the suite differentiates is generated once, under the plan predicted
# before generation (srcad/transform/settle.py): a plan that did not hold fails its test
settle.strict = True
