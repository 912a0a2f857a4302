#!/usr/bin/env bash
# Installs the reference x402 client (PyPI `x402`, the x402 Foundation's
# payment-protocol SDK, pinned, with its `evm` and `clients` extras:
# eth-account, web3, requests) into .tools/venv when missing and prints the
# venv's python. The sponsorship tests (host/bin/tests/it/sponsor.rs) run
# conformance/tools/x402_pay.py with it: a client nobody here wrote pays the
# relay's 402 invoice for a sponsored EIP-7702 transaction.
set -euo pipefail
version=2.25.0
py=$("$(dirname "${BASH_SOURCE[0]}")/pypi.sh" x402 "$version")
if ! "$py" -c "import eth_account, web3, requests" 2>/dev/null; then
  "$(dirname "$py")/pip" install --quiet --disable-pip-version-check "x402[evm,clients]==$version" >&2
fi
echo "$py"
