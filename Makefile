# The two commands of the README: `make demo` and `make test`. Both create the
# virtualenv on first use and reinstall when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv demo test check lint format typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml setup.py $(wildcard engine/_native/*.c engine/_native/*.h) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,lake]'
	touch $(STAMP)

# The virtualenv with `ggsci` installed in it (editable); say how to put it on PATH.
venv: $(STAMP)
	@echo "ggsci is $(CURDIR)/$(BIN)/ggsci; to run it as ggsci:"
	@echo "  export PATH=\"$(CURDIR)/$(BIN):\$$PATH\"   (or: . $(BIN)/activate)"

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

bench: $(STAMP)
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache engine/_native/*.so
