# Snakemake on Slurm (workflow/profiles/slurm; docs/scaling-out.md):
#
#   make slurm-plugin  # the executor plugin into .venv, from requirements/slurm.lock (hashed)
#   make slurm         # that, plus Debian's slurm-wlm, slurmdbd, munge and mariadb-server for the
#                      # single-node test cluster (tests/integration/test_slurm.py; apt-get, root or sudo)
#   make slurm-lock    # recompile requirements/slurm.lock from requirements/slurm.in
#
# On a real cluster only the plugin is needed (the cluster brings sbatch/sacct). Not part of
# `make setup`; `make test` runs `make slurm` where it can (root, or sudo without a password;
# Makefile test-extras); without them the Slurm test is skipped, saying `make slurm`.

SLURM_LOCK ?= requirements/slurm.lock
SLURM_STAMP := $(VENV)/.slurm-installed
SLURM_PACKAGES ?= slurm-wlm slurmdbd munge mariadb-server mariadb-client

.PHONY: slurm slurm-plugin slurm-packages slurm-lock

# --no-deps: the plugin's own dependencies are main.lock's (slurm.lock holds only what it adds)
$(SLURM_STAMP): $(STAMP) $(SLURM_LOCK)
	$(PIP) --no-deps -r $(SLURM_LOCK)
	$(BIN)/python -c "import snakemake_executor_plugin_slurm, snakemake_executor_plugin_slurm_jobstep; print('make slurm: executor plugin installed into $(VENV)')"
	touch $(SLURM_STAMP)

slurm-plugin: $(SLURM_STAMP)

slurm-packages:
	@if command -v slurmctld >/dev/null 2>&1 && command -v slurmdbd >/dev/null 2>&1 \
	    && command -v munged >/dev/null 2>&1 && command -v mariadbd >/dev/null 2>&1; then \
	  echo "make slurm: slurmctld, slurmdbd, munged and mariadbd are installed"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "make slurm: no apt-get here (not Debian/Ubuntu); install Slurm (slurmctld, slurmd, slurmdbd)," \
	       "MUNGE and MariaDB with the system's package manager, then run \`make slurm-plugin\`" >&2; exit 1; \
	else \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=; \
	  elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	  else echo "make slurm: apt-get needs root and there is no sudo; as root run:" \
	            "apt-get update && apt-get install -y --no-install-recommends $(SLURM_PACKAGES)" \
	            "(then \`make slurm-plugin\` as yourself; the test cluster itself also needs root)" >&2; exit 1; fi; \
	  echo "make slurm: $${SUDO:+sudo }apt-get install -y --no-install-recommends $(SLURM_PACKAGES)"; \
	  $$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $(SLURM_PACKAGES) || { \
	    echo "make slurm: installing Debian's Slurm packages failed (root rights, network or package lists;" \
	         "see above); the Slurm test stays skipped" >&2; exit 1; }; \
	fi

slurm: slurm-packages slurm-plugin

# Resolve requirements/slurm.in against main.lock (-c) in a throwaway venv, with hashes, then
# keep only the entries main.lock does not pin (requirements/only_new.py).
SLURM_LOCK_HEADER := \# Optional: the Snakemake Slurm executor plugin, installed into .venv by `make slurm` / `make slurm-plugin`\n\# (make/slurm.mk) with --no-deps after main.lock. Written by `make slurm-lock` from\n\# requirements/slurm.in (pip-compile --generate-hashes, constrained by main.lock); what the\n\# plugin shares with main.lock (numpy, pandas, pyyaml, throttler, snakemake-interface-*) is\n\# pinned there and left out here.

slurm-lock:
	rm -rf .venv-slurm-lock && $(PYTHON) -m venv .venv-slurm-lock
	.venv-slurm-lock/bin/python -m pip install --quiet pip-tools==7.6.2
	cd requirements && ../.venv-slurm-lock/bin/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe \
		--no-emit-index-url --no-emit-find-links --output-file ../.venv-slurm-lock/slurm-all.lock slurm.in
	.venv-slurm-lock/bin/python requirements/only_new.py requirements/main.lock .venv-slurm-lock/slurm-all.lock \
		$(SLURM_LOCK) "$$(printf '$(SLURM_LOCK_HEADER)')"
	rm -rf .venv-slurm-lock
