#!/usr/bin/env bash
# The main job: the whole relay mesh on this machine, loopback only.
#
#   conformance/up.sh [--wasm] [--chains 1,8453,42161,10] [--block-time N]
#
# Installs anvil (npm, into .tools/) when missing, builds the host, packages
# every rail as a native plugin into plugins/dist, then runs `relay up`:
# anvil chains with the project's contracts, the upstream simulators, and
# the host on 127.0.0.1:8787 with SQLite in .devnet/. Prints the URLs, the
# relayer and Permit2 addresses and a copy-paste example. Ctrl-C stops
# everything.
#
# --wasm also packages the rails plugins/plugins.toml lists as wasm
# components (installs Debian's wasm toolchain when missing; minutes more on
# a first run); the host prefers them over the native builds.
#
# Each phase's time goes to stderr (`up: <phase> <s> s`): docs/performance.md
# has the figures on the 2-core machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/relay-target}
wasm=0
args=()
for a in "$@"; do
  case $a in
    --wasm) wasm=1 ;;
    *) args+=("$a") ;;
  esac
done
phase_start=$SECONDS
phase() {
  echo "up: $1 $((SECONDS - phase_start)) s" >&2
  phase_start=$SECONDS
}
conformance/tools/system-deps.sh
conformance/devnet/tools/install.sh >/dev/null
export RELAY_ANVIL="$root/.tools/bin/anvil"
phase tools
# one invocation: the packager shares the host's dependency builds (features
# resolved once); `--features devnet` applies to the package that has it.
# A first run is mostly this build (docs/building-and-testing.md); two cuts
# keep it short: no jemalloc (the host's allocator in every other build,
# its C sources two minutes of CPU here), and, without --wasm, wasmtime's
# compiler left unoptimised (the tests optimise it to compile the wasm
# rails they check quickly; a devnet without wasm rails never runs it).
# Building after conformance/test.sh (or before it) rebuilds what these
# change: the host's crates and, without --wasm, wasmtime's.
fast=(--no-default-features)
if [ "$wasm" = 0 ]; then
  for p in cranelift-codegen regalloc2 cranelift-entity cranelift-frontend cranelift-bforest \
    cranelift-assembler-x64 wasmtime-internal-cranelift wasmparser; do
    fast+=(--config "profile.dev.package.$p.opt-level=0")
  done
fi
cargo build -q --locked -p relay-host -p relay-plugins --features devnet "${fast[@]}"
phase host
"$CARGO_TARGET_DIR/debug/relay-plugins" build --as native --out plugins/dist
phase native-rails
if [ "$wasm" = 1 ]; then
  "$CARGO_TARGET_DIR/debug/relay-plugins" build --out plugins/dist
  phase wasm-rails
fi
export RELAY_PLUGINS_DIR=${RELAY_PLUGINS_DIR:-$root/plugins/dist}
export RELAY_DATA_DIR=${RELAY_DATA_DIR:-$root/.devnet}
exec "$CARGO_TARGET_DIR/debug/relay" up "${args[@]}"
