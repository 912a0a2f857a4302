#!/usr/bin/env bash
# Installs the JavaScript implementations relay-sealed's interop tests
# check against (npm, pinned) into .tools/js-sealed when missing and prints
# the directory holding their node_modules:
#   - @hpke/core + @hpke/hybridkem-x-wing: HPKE with the X-Wing KEM;
#   - @noble/post-quantum: X-Wing (ml_kem768_x25519) and ML-DSA-65;
#   - @scopelift/stealth-address-sdk 0.2.2: ERC-5564 scheme 1 (later
#     versions hash another encoding of the shared point: pinned);
#   - @cloudflare/privacypass-ts 0.8.1: Privacy Pass type 2 (Plus passes);
#   - bhttp-js and @hpke/chacha20poly1305: with @hpke/core, the oblivious
#     HTTP client of the privacy lane's tests (ohttp-client.mjs);
#   - snarkjs 0.7.6: the independent Groth16 verifier of the privacy
#     pool's proofs, and @semaphore-protocol/contracts 3.15.2: PSE's
#     published verifier, whose key the pool's must equal (pool-verify.mjs).
# conformance/tools/sealed-interop.mjs and ohttp-client.mjs drive them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir="$root/.tools/js-sealed"
pins=("@hpke/core@1.9.0" "@hpke/hybridkem-x-wing@0.7.0" "@noble/post-quantum@0.7.1" "@scopelift/stealth-address-sdk@0.2.2" "@cloudflare/privacypass-ts@0.8.1" "@hpke/chacha20poly1305@1.8.0" "bhttp-js@0.2.1" "snarkjs@0.7.6" "@semaphore-protocol/contracts@3.15.2")
mkdir -p "$dir"
[ -f "$dir/package.json" ] || printf '{\n  "name": "relay-sealed-oracles",\n  "private": true,\n  "type": "module"\n}\n' >"$dir/package.json"
installed() { node -p "require('$dir/node_modules/$1/package.json').version" 2>/dev/null || true; }
missing=0
for pin in "${pins[@]}"; do
  name=${pin%@*}
  [ "$(installed "$name")" = "${pin##*@}" ] || missing=1
done
if [ "$missing" = 1 ]; then
  npm install --prefix "$dir" --no-audit --no-fund --silent "${pins[@]}" >&2
fi
echo "$dir"
