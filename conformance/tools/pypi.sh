#!/usr/bin/env bash
# Installs one pinned PyPI package into .tools/venv when it is missing or
# another version, and prints the venv's python:
#
#   conformance/tools/pypi.sh <package> <version>
#
# The test tools that are Python packages (webhooks.sh, mcp.sh) call it;
# their tests run the printed python.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 <package> <version>" >&2
  exit 2
fi
package=$1
version=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# the real path: a venv's scripts name their python by the path it was
# made at, and .tools may be a link to a cache a later clone reuses
venv=$(realpath -m "$root/.tools/venv")
py="$venv/bin/python"
[ -x "$py" ] || python3 -m venv "$venv" >&2
if ! "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('$package') != '$version')" 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$package==$version" >&2
fi
echo "$py"
