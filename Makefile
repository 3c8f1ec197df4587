# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench soak lint venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/hooks.py
	$(BIN)/python benchmarks/derive.py
	$(BIN)/python benchmarks/check.py
	$(BIN)/python benchmarks/rules.py
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/readers.py
	$(BIN)/python benchmarks/outbox.py

lint: $(STAMP)
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/ruff check --select F pipeline tests benchmarks

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis
