#!/usr/bin/env bash
# The main job: the whole relay mesh on this machine, loopback only.
#
#   conformance/up.sh [--chains 1,8453,42161,10] [--block-time N]
#
# Installs anvil (npm, into .tools/) and the wasm toolchain when missing,
# packages every rail into plugins/dist, then runs `relay up`: anvil chains
# with the project's contracts, the upstream simulators, and the host on
# 127.0.0.1:8787 with SQLite in .devnet/. Prints the URLs, the relayer and
# Permit2 addresses and a copy-paste example. Ctrl-C stops everything.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/relay-target}
conformance/tools/system-deps.sh
conformance/devnet/tools/install.sh >/dev/null
export RELAY_ANVIL="$root/.tools/bin/anvil"
cargo build -q --locked -p relay-host --features devnet
cargo build -q --locked -p relay-plugins
"$CARGO_TARGET_DIR/debug/relay-plugins" build --out plugins/dist
export RELAY_PLUGINS_DIR=${RELAY_PLUGINS_DIR:-$root/plugins/dist}
export RELAY_DATA_DIR=${RELAY_DATA_DIR:-$root/.devnet}
exec "$CARGO_TARGET_DIR/debug/relay" up "$@"
