#!/usr/bin/env bash
# Installs pymerkle (PyPI, pinned: RFC 6962 trees) into .tools/venv when
# missing and prints the venv's python. relay-sealed's witness interop test
# runs conformance/tools/merkle_roots.py with it.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/pypi.sh" pymerkle 7.0.0
