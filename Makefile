# Fresh machine: `make demo` trains a digits classifier with a training step compiled by
# srcad.export, `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo quickstart test fuzz lint format clean bench docs

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.created
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

$(VENV)/.examples: pyproject.toml $(VENV)/.created
	$(PY) -m pip install --quiet -e '.[examples]'
	touch $@

demo: $(VENV)/.examples
	$(PY) examples/train_digits.py

quickstart: $(VENV)/.created
	$(PY) -m pip install --quiet -e .
	$(PY) examples/quickstart.py

# on every core (pytest-xdist): about 7 minutes on 2 cores, 12 on one
test: $(VENV)/.installed
	$(PY) -m pytest -q -n auto

# the documentation site, from docs/ and the docstrings, into build/site (a test builds it too)
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# gradient timings of srcad and its peers against hand-written NumPy (docs/benchmarks.md);
# installs the peers (the `bench` extra) into the virtualenv; table + benchmarks/results/
$(VENV)/.bench-installed: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	$(PY) -m benchmarks.run

# a long differential-fuzzing campaign over fresh seeds (FUZZ_START, FUZZ_COUNT to choose;
# FUZZ_HYPOTHESIS programs drawn by hypothesis, which shrinks a failure); shrink a failing
# seed with `$(PY) tests/fuzz/minimize.py SEED` (docs/reliability.md)
FUZZ_START ?= 100000
FUZZ_COUNT ?= 2000
FUZZ_HYPOTHESIS ?= 200
fuzz: $(VENV)/.installed
	SRCAD_FUZZ_START=$(FUZZ_START) SRCAD_FUZZ_COUNT=$(FUZZ_COUNT) \
	SRCAD_FUZZ_HYPOTHESIS=$(FUZZ_HYPOTHESIS) $(PY) -m pytest -q -rf tests/fuzz

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check srcad tests examples benchmarks
	$(VENV)/bin/ruff format --check srcad tests examples benchmarks

format: $(VENV)/.installed
	$(VENV)/bin/ruff format srcad tests examples benchmarks
	$(VENV)/bin/ruff check --fix srcad tests examples benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
