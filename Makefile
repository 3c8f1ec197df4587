# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test e2e bench bench-scale soak lint venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# The headless browser the cockpit's page tests drive (Debian's chromium and chromium-driver),
# installed with apt-get when missing; where it cannot be, those tests skip and say why.
browser:
	bash scripts/browser.sh

# The fast suite; the real agent clients run under `make e2e` (tests/e2e/, see docs/E2E.md).
test: $(STAMP)
	$(BIN)/python -m pytest --ignore=tests/e2e

# Claude Code from the npm registry (cached under .venv/e2e-clients/) against a fake model API on
# 127.0.0.1. pytest exits 5 when it collects nothing, which fails here as any non-zero exit does.
e2e: $(STAMP)
	$(BIN)/python -m pytest tests/e2e

bench: $(STAMP)
	$(BIN)/python benchmarks/inventory.py
	$(BIN)/python benchmarks/hooks.py
	$(BIN)/python benchmarks/derive.py
	$(BIN)/python benchmarks/check.py
	$(BIN)/python benchmarks/rules.py
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/readers.py
	$(BIN)/python benchmarks/outbox.py
	$(BIN)/python benchmarks/scale.py
	$(BIN)/python benchmarks/loop.py
	$(BIN)/python benchmarks/currency.py

# issue 17's table at both sizes (20,000 and 1,000,000 ledger lines): a few minutes on 2 cores
bench-scale: $(STAMP)
	$(BIN)/python benchmarks/scale.py

lint: $(STAMP)
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/ruff check --select F pipeline tests benchmarks

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis
