import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
sys.path.insert(0, str(Path(__file__).parent / "runtime"))

settings.register_profile("srcad", deadline=None, max_examples=60, derandomize=True)
settings.load_profile("srcad")
