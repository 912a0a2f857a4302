#!/usr/bin/env bash
# Installs viem (npm, pinned) into .tools/js when missing and prints the
# directory holding its node_modules. The independent-signer test
# (host/bin/tests/it/router.rs) signs the router's typed data with it
# through conformance/tools/sign-typed.mjs: an EIP-712 implementation no
# one here wrote.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=2.57.20
dir="$root/.tools/js"
mkdir -p "$dir"
[ -f "$dir/package.json" ] || printf '{\n  "name": "relay-js-tools",\n  "private": true,\n  "type": "module"\n}\n' >"$dir/package.json"
have=$(node -p "require('$dir/node_modules/viem/package.json').version" 2>/dev/null || true)
if [ "$have" != "$version" ]; then
  npm install --prefix "$dir" --no-audit --no-fund --silent "viem@$version" >&2
fi
echo "$dir"
