# Fresh machine: `make demo` trains a digits classifier with a training step compiled by
# srcad.export, `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo quickstart test fuzz lint format clean

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

test: $(VENV)/.installed
	$(PY) -m pytest -q

# a long differential-fuzzing campaign over fresh seeds (FUZZ_START, FUZZ_COUNT to choose)
FUZZ_START ?= 100000
FUZZ_COUNT ?= 2000
fuzz: $(VENV)/.installed
	SRCAD_FUZZ_START=$(FUZZ_START) SRCAD_FUZZ_COUNT=$(FUZZ_COUNT) $(PY) -m pytest -q tests/fuzz

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check srcad tests examples
	$(VENV)/bin/ruff format --check srcad tests examples

format: $(VENV)/.installed
	$(VENV)/bin/ruff format srcad tests examples
	$(VENV)/bin/ruff check --fix srcad tests examples

clean:
	rm -rf $(VENV) build *.egg-info
