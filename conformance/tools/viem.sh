#!/usr/bin/env bash
# Installs viem and OpenZeppelin's merkle-tree (npm, pinned) into
# .tools/js when missing and prints the directory holding their
# node_modules. The independent-signer test (host/bin/tests/it/router.rs)
# signs the router's typed data with viem through
# conformance/tools/sign-typed.mjs: an EIP-712 implementation no one here
# wrote; conformance/tools/verify-attestations.mjs checks quote
# attestations' Merkle proofs with OpenZeppelin's verifier. The book's
# client examples (docs/examples, host/bin/tests/it/docs_clients.rs) also
# run here: the Uniswap permit2-sdk with the ethers v5 it is built on.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=2.57.20
dir="$root/.tools/js"
mkdir -p "$dir"
[ -f "$dir/package.json" ] || printf '{\n  "name": "relay-js-tools",\n  "private": true,\n  "type": "module"\n}\n' >"$dir/package.json"
merkle=1.0.8
permit2sdk=1.4.0
ethers=5.8.0
# the permit2-sdk's CommonJS build requires tslib without declaring it
tslib=2.9.1
installed() { node -p "require('$dir/node_modules/$1/package.json').version" 2>/dev/null || true; }
if [ "$(installed viem)" != "$version" ] || [ "$(installed @openzeppelin/merkle-tree)" != "$merkle" ] \
  || [ "$(installed @uniswap/permit2-sdk)" != "$permit2sdk" ] || [ "$(installed ethers)" != "$ethers" ] || [ "$(installed tslib)" != "$tslib" ]; then
  npm install --prefix "$dir" --no-audit --no-fund --silent "viem@$version" "@openzeppelin/merkle-tree@$merkle" \
    "@uniswap/permit2-sdk@$permit2sdk" "ethers@$ethers" "tslib@$tslib" >&2
fi
echo "$dir"
