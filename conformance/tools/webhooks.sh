#!/usr/bin/env bash
# Installs the Standard Webhooks reference verifier (PyPI `standardwebhooks`,
# pinned) into .tools/venv when missing and prints the venv's python. The
# webhook tests (host/bin/tests/it/webhooks.rs) run
# conformance/tools/webhook_receiver.py with it: a receiver that checks
# every delivery with that off-the-shelf verifier and the spec's HMAC.
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/pypi.sh" standardwebhooks 1.0.0
