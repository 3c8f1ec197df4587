# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The demo needs majordomus alone, the suite its test extras too: one .venv, a stamp each. The
# test install holds the demo's, so it stamps both and a demo after a test installs nothing.
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test e2e bench bench-scale soak lint venv clean dist

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

venv: $(STAMP)

demo: $(DEMO_STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" bash scripts/demo.sh

# The headless browser the cockpit's page tests drive (Debian's chromium and chromium-driver),
# installed with apt-get when missing; where it cannot be, those tests skip and say why.
browser:
	bash scripts/browser.sh

# The fast suite; the real agent clients run under `make e2e` (tests/e2e/, see docs/E2E.md).
# It ends by saying how long it took, install included, and keeps pytest's exit code.
test:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory $(STAMP) && $(BIN)/python -m pytest --ignore=tests/e2e; code=$$?; \
	elapsed=$$(( $$(date +%s) - start )); \
	echo "make test took $$((elapsed / 60)) min $$((elapsed % 60)) s (installing included), exit $$code"; \
	exit $$code

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
	$(BIN)/python benchmarks/teamsim.py

	$(BIN)/python benchmarks/currency.py

# issue 17's table at both sizes (20,000 and 1,000,000 ledger lines): a few minutes on 2 cores
bench-scale: $(STAMP)
	$(BIN)/python benchmarks/scale.py

# The sdist and the wheel a release publishes, into dist/, checked as the index will check them
# (tests/test_build.py does the same in a temporary folder).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build
	$(BIN)/twine check --strict dist/*

lint: $(STAMP)
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/ruff check --select F pipeline tests benchmarks

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis
