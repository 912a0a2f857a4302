#!/usr/bin/env bash
# Installs the devnet's tools into the project-local directory <repo>/.tools/ (gitignored):
#   - anvil, from the npm package @foundry-rs/anvil-linux-amd64 (symlinked to .tools/bin/anvil)
#   - solc (solcjs), from the npm package solc, used by conformance/devnet/contracts/build.mjs
#   - @openzeppelin/contracts (Solidity sources the devnet's YieldVault imports; build.mjs
#     resolves them offline from .tools/node_modules)
#   - poseidon-solidity (the PoseidonT3 library the privacy pool's tree hashes with) and
#     snarkjs (its Groth16 verifier template: contracts/pool-verifier.mjs renders it)
# Idempotent: skips whatever is already installed at the pinned version. Never reads stdin.
# Prints the anvil path on its last line of stdout.
set -euo pipefail

ANVIL_PKG="@foundry-rs/anvil-linux-amd64"
ANVIL_VERSION="1.7.1"
SOLC_VERSION="0.8.28"
OZ_VERSION="5.1.0"
POSEIDON_VERSION="0.0.5"
SNARKJS_VERSION="0.7.6"

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$script_dir/../../.." && pwd)"
# the real path (.tools may be a link to a cache later clones reuse): the
# anvil link then names a file that outlives this clone
tools=$(realpath -m "$repo_root/.tools")
bin="$tools/bin"
mkdir -p "$bin"

if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm not found; install Node.js >= 20 first" >&2
    exit 1
fi

# A private package.json so npm installs here, not into a parent project.
if [ ! -f "$tools/package.json" ]; then
    printf '{\n  "name": "relay-devnet-tools",\n  "private": true\n}\n' >"$tools/package.json"
fi

installed_version() {
    # prints the installed version of package $1, or nothing
    local manifest="$tools/node_modules/$1/package.json"
    [ -f "$manifest" ] && node -p "require(process.argv[1]).version" "$manifest" 2>/dev/null || true
}

wanted=()
[ "$(installed_version "$ANVIL_PKG")" = "$ANVIL_VERSION" ] || wanted+=("$ANVIL_PKG@$ANVIL_VERSION")
[ "$(installed_version solc)" = "$SOLC_VERSION" ] || wanted+=("solc@$SOLC_VERSION")
[ "$(installed_version @openzeppelin/contracts)" = "$OZ_VERSION" ] || wanted+=("@openzeppelin/contracts@$OZ_VERSION")
[ "$(installed_version poseidon-solidity)" = "$POSEIDON_VERSION" ] || wanted+=("poseidon-solidity@$POSEIDON_VERSION")
[ "$(installed_version snarkjs)" = "$SNARKJS_VERSION" ] || wanted+=("snarkjs@$SNARKJS_VERSION")

if [ "${#wanted[@]}" -gt 0 ]; then
    echo "install.sh: installing ${wanted[*]} into $tools" >&2
    npm install --prefix "$tools" --no-audit --no-fund --loglevel=error --save-exact \
        --os=linux --cpu=x64 "${wanted[@]}" </dev/null >&2
fi

anvil_src="$tools/node_modules/$ANVIL_PKG/bin/anvil"
if [ ! -f "$anvil_src" ]; then
    # fall back to searching the package in case its layout changes
    anvil_src="$(find "$tools/node_modules/$ANVIL_PKG" -type f -name anvil -print -quit)"
fi
if [ -z "$anvil_src" ] || [ ! -f "$anvil_src" ]; then
    echo "install.sh: anvil binary not found inside $ANVIL_PKG" >&2
    exit 1
fi
chmod +x "$anvil_src"
ln -sfn "$anvil_src" "$bin/anvil"

"$bin/anvil" --version >&2
echo "$bin/anvil"
