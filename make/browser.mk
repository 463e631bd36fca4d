# Chromium for the browser test (tests/integration/test_mlflow_ui_browser.py, skipped without it):
#
#   make browser       # Debian's chromium package, with apt-get (sudo when not root)
#
# Not part of `make setup` (a system package needs root); `make test` runs it where it can
# (root, or sudo without a password; Makefile test-extras), and the test is skipped without it.

.PHONY: browser

browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  echo "make browser: Chromium is installed: $$(command -v chromium || command -v chromium-browser)"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "make browser: no apt-get here (not Debian/Ubuntu); install Chromium with the system's" \
	       "package manager so that \`chromium\` is on PATH" >&2; exit 1; \
	else \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=; \
	  elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; \
	  else echo "make browser: apt-get needs root and there is no sudo; as root run:" \
	            "apt-get update && apt-get install -y chromium" >&2; exit 1; fi; \
	  echo "make browser: $${SUDO:+sudo }apt-get install -y chromium"; \
	  $$SUDO apt-get update && $$SUDO apt-get install -y chromium || { \
	    echo "make browser: installing Debian's chromium failed (root rights, network or package lists;" \
	         "see above); the browser test stays skipped until \`chromium\` is on PATH" >&2; exit 1; }; \
	fi
