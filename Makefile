# Set-up is idempotent: `.venv/.installed` is a stamp that is refreshed only when
# pyproject.toml changes, so a second `make test` starts straight away.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: demo test test-all install clean-venv bench rehearsal lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# torch first, alone and pinned: otherwise a dependency's `torch` requirement pulls
# a multi-GB CUDA build on a CPU machine (see ../shared/design/STACK.md).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[test,inspect]' torch==2.13.0
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/py4 demo

# ruff (bug-catching rules) on src, tests, benchmarks and scripts, mypy on the pure packages; both read their settings
# from pyproject.toml. A few seconds; docs/dev/lint.md.
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy

test: $(STAMP)
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-all: $(STAMP)
	$(BIN)/python -m pytest -m "" $(PYTEST_ARGS)

# The campaign rehearsal (docs/rehearsal.md): the `campaign` extra (torchao, which GLM's
# adamw_torch_8bit needs) goes into the venv here only, never with `make install`/`make test`
# (CI's install); then the slow rehearsal tests, the whole campaign DAG on the stand-ins (hours).
CAMPAIGN_STAMP := $(VENV)/.campaign-installed

$(CAMPAIGN_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,campaign]' torch==2.13.0
	touch $(CAMPAIGN_STAMP)

rehearsal: $(STAMP) $(CAMPAIGN_STAMP)
	$(BIN)/python -m pytest -m slow tests/rehearsal $(PYTEST_ARGS)

clean-venv:
	rm -rf $(VENV)
