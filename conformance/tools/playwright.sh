#!/usr/bin/env bash
# Installs what the dashboard's browser test (host/bin/tests/it/admin.rs)
# drives and prints the venv's python:
#
# - Playwright for Python (PyPI, pinned) into .tools/venv — its driver only:
#   never `playwright install`, no browser is downloaded;
# - Debian's headless Chromium (`apt-get install -y chromium`) when
#   /usr/bin/chromium is missing (root or passwordless sudo needed).
#
# The test launches /usr/bin/chromium through Playwright's
# `executable_path`.
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
if [ ! -x /usr/bin/chromium ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
fi
exec "$here/pypi.sh" playwright 1.65.2
