#!/usr/bin/env bash
# Refresh the hashed dependency locks (pip-tools' pip-compile --generate-hashes).
#   bash requirements/refresh.sh          # main.lock + torch-cpu.lock + slurm.lock
#   bash requirements/refresh.sh cuda     # also torch-cuda.lock (downloads the CUDA wheels to hash them, ~4 GB)
# Needs PyPI and the PyTorch CPU index (PYTORCH_CPU_INDEX; set it empty where pip finds
# torch==2.13.0+cpu in a local wheel directory instead). Commit the changed locks; `make setup` reinstalls
# from them (the venv's stamp depends on the lock files).
set -euo pipefail
cd "$(dirname "$0")/.."
python3.11 -m venv .venv-lock
.venv-lock/bin/pip install --quiet pip-tools==7.6.2
COMPILE=(.venv-lock/bin/pip-compile --quiet --generate-hashes --allow-unsafe --no-emit-index-url --no-emit-find-links)

# Resolve with the CPU torch so that torch's own dependencies are pinned in main.lock,
# then move torch into its own lock (the build differs between CPU and CUDA).
INDEX="${PYTORCH_CPU_INDEX-https://download.pytorch.org/whl/cpu}"
"${COMPILE[@]}" --strip-extras --extra test ${INDEX:+--extra-index-url "$INDEX"} \
    -o requirements/main.lock pyproject.toml requirements/torch-cpu.in
.venv-lock/bin/python requirements/split_torch.py requirements/main.lock requirements/torch-cpu.lock \
"# PyTorch, CPU build (written by requirements/refresh.sh). main.lock holds everything else.
# The +cpu wheels are on the PyTorch CPU index; pip also takes this exact file from a local
# wheel directory (--find-links) where the machine has one.
--extra-index-url https://download.pytorch.org/whl/cpu"

if [[ "${1:-}" == "cuda" ]]; then
    (cd requirements && "../${COMPILE[0]}" "${COMPILE[@]:1}" -o torch-cuda.lock torch-cuda.in)
fi

# The optional Slurm executor plugin (make/slurm.mk), constrained by the new main.lock: only
# what it adds to main.lock is kept in slurm.lock.
(cd requirements && "../${COMPILE[0]}" "${COMPILE[@]:1}" --strip-extras -o ../.venv-lock/slurm-all.lock slurm.in)
.venv-lock/bin/python requirements/only_new.py requirements/main.lock .venv-lock/slurm-all.lock requirements/slurm.lock \
"$(sed -n '/^SLURM_LOCK_HEADER/s/^SLURM_LOCK_HEADER := //p' make/slurm.mk | sed 's/\\#/#/g; s/\\n/\n/g')"
