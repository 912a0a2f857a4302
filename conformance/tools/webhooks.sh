#!/usr/bin/env bash
# Installs the Standard Webhooks reference verifier (PyPI `standardwebhooks`,
# pinned) into .tools/venv when missing and prints the venv's python. The
# webhook tests (host/bin/tests/it/webhooks.rs) run
# conformance/tools/webhook_receiver.py with it: a receiver that checks
# every delivery with that off-the-shelf verifier and the spec's HMAC.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=1.0.0
venv="$root/.tools/venv"
py="$venv/bin/python"
[ -x "$py" ] || python3 -m venv "$venv" >&2
if ! "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('standardwebhooks') != '$version')" 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$version" >&2
fi
echo "$py"
