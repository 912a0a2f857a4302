#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned) into .tools/venv when missing and
# prints the path of its `st` command. The HTTP fuzz test
# (host/bin/tests/it/api_contract.rs) runs it against /api/openapi.json.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=4.32.5
# the real path: a venv's scripts name their python by the path it was
# made at, and .tools may be a link to a cache a later clone reuses
venv=$(realpath -m "$root/.tools/venv")
st="$venv/bin/st"
if [ ! -x "$st" ] || ! "$st" --version 2>/dev/null | grep -q "$version"; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version" >&2
fi
echo "$st"
