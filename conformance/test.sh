#!/usr/bin/env bash
# Runs every test of relay, from a fresh clone, with no stdin.
#
#   conformance/test.sh
#
# 1. Installs what the tests need and is missing: anvil + solc (npm, into
#    .tools/), viem (npm, into .tools/js: the independent EIP-712 signer),
#    the sealed-messaging oracles (npm, into .tools/js-sealed: @hpke/core,
#    @noble/post-quantum, ScopeLift's stealth SDK; pymerkle from PyPI),
#    schemathesis, jsonschema and standardwebhooks (PyPI, into .tools/venv), Playwright
#    for Python (PyPI) with Debian's chromium (apt) for the dashboard's
#    browser test, the wasm toolchain
#    (rustup's wasm32 target if installed, otherwise Debian's rustc-web), a
#    PostgreSQL server when none answers.
# 2. Checks: compiled contracts match their sources, rustfmt.
# 3. Builds the workspace once, clippy -D warnings riding on the build.
# 4. Packages every rail (plugins/plugins.toml) into the test plugins dir
#    with the packager just built.
# 5. Runs the tests: unit, integration (real anvil chains, SQLite,
#    Postgres, the real plugin loader, real HTTP), conformance kit, benches
#    in test mode; the doc examples of the crates rail integrators build
#    against.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/relay-target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
started=$(date +%s)
step() { printf '\n== %s (at %ds)\n' "$*" $(($(date +%s) - started)) >&2; }

step "tools"
# The tools live outside the clone, as the target dir does, so a fresh clone
# on a machine that ran the tests before reuses them (warm: ~50 s -> ~5 s);
# every install script still checks its pins and installs what is missing
# or another version, so a fresh machine installs from scratch. A checkout
# that has its own .tools keeps it. One run at a time installs.
if [[ ! -e .tools && ! -L .tools ]]; then
  tools_dir=${RELAY_TOOLS_DIR:-$HOME/.cache/relay-tools}
  mkdir -p "$tools_dir"
  ln -s "$(realpath "$tools_dir")" .tools
fi
# What the build needs installs first; everything the tests need installs
# in the background while the workspace compiles — the build is CPU-bound,
# the installs wait on the network and the disk (a fresh machine's apt,
# npm and PyPI installs and Debian's wasm toolchain, ~2.5 min, overlap the
# build). Each install script prints what the tests read; the variables
# are exported once the installs are done ("tools ready").
conformance/tools/system-deps.sh
tools_env=$(mktemp)
tools_log=$(mktemp)
(
  set -euo pipefail
  exec 9>>"$(realpath .tools)/.install-lock"
  flock 9
  tool() {
    local value
    value=$("$2")
    printf 'export %s=%q\n' "$1" "$value" >>"$tools_env"
  }
  conformance/devnet/tools/install.sh >/dev/null
  printf 'export RELAY_ANVIL=%q\n' "$root/.tools/bin/anvil" >>"$tools_env"
  tool RELAY_SCHEMATHESIS conformance/tools/schemathesis.sh
  tool RELAY_TEST_POSTGRES_URL conformance/tools/postgres.sh
  tool RELAY_VIEM conformance/tools/viem.sh
  tool RELAY_WEBHOOK_PY conformance/tools/webhooks.sh
  tool RELAY_MCP_PY conformance/tools/mcp.sh
  tool RELAY_PLAYWRIGHT_PY conformance/tools/playwright.sh
  tool RELAY_X402_PY conformance/tools/x402.sh
  tool RELAY_JSONSCHEMA_PY conformance/tools/jsonschema.sh
  tool RELAY_SEALED_JS conformance/tools/sealed-js.sh
  tool RELAY_PYMERKLE_PY conformance/tools/pymerkle.sh
  plugins/build-wasm.sh --toolchain
) >"$tools_log" 2>&1 &
tools_pid=$!
# Never leave the installs half done (apt holds dpkg's lock): a failed
# build waits for them before the script exits.
trap 'wait "$tools_pid" 2>/dev/null || true' EXIT

if [[ ${CI:-} == true ]]; then
  # A CI clone is fresh, so every file is new to cargo: unchanged files get
  # back the times they had when this clone path was last built, and only
  # what changed recompiles (see the script for why that is sound).
  python3 conformance/tools/source-mtimes.py "$CARGO_TARGET_DIR/.relay-source-mtimes.json"
fi

step "format"
cargo fmt --all -- --check

# The lints ride on the build: every cargo below compiles the workspace's
# crates through clippy-driver with -D warnings, as `cargo clippy` does
# (it is `cargo check` with these two variables), so one build both lints
# and produces the artifacts the tests run — dependencies compile once,
# not once to check and once to build. A lint is a compile error: no test
# runs. Every cargo here sets them alike, so nothing builds twice.
export RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

step "build and lint"
# One cargo over the whole workspace: a subset (`-p relay-host` beside
# `--exclude relay-host`, or `cargo run -p relay-plugins`) resolves the
# dependencies' features differently and rebuilds them (wasmtime and
# cranelift twice: measured 736 s -> 901 s for a split), so everything,
# the packager's binaries included (cargo builds a package's binary for
# its integration tests: relay-plugins and relay-componentize have them),
# is built here once.
cargo test --workspace --all-targets --locked --no-run

step "tools ready"
tools_ok=0
wait "$tools_pid" || tools_ok=$?
cat "$tools_log" >&2
if [[ $tools_ok -ne 0 ]]; then
  echo "installing the test tools failed (exit $tools_ok): see above" >&2
  exit 1
fi
# shellcheck disable=SC1090
source "$tools_env"
rm -f "$tools_env" "$tools_log"

step "contracts match their sources"
node conformance/devnet/contracts/build.mjs --check

step "package rails"
export RELAY_TEST_PLUGINS="$CARGO_TARGET_DIR/relay-test-plugins"
export RELAY_COMPONENTIZE="$CARGO_TARGET_DIR/debug/relay-componentize"
"$CARGO_TARGET_DIR/debug/relay-plugins" build --out "$RELAY_TEST_PLUGINS"

# RELAY_SOAK_ONLY=1 (a long soak, docs/soak.md) skips the suites: tools,
# build, rails, then the soak alone on the machine.
if [[ "${RELAY_SOAK_ONLY:-0}" != 1 ]]; then
step "tests"
# The integration tests mostly wait: on anvil, on simulators' settlement,
# on a child host. Four at a time instead of one per core: the host's
# integration binary 351 s -> 253 s at six on 2 cores (all green); four
# keeps headroom for the ones that compile (the scaffolded rail) or fuzz.
export RUST_TEST_THREADS=${RUST_TEST_THREADS:-4}
cargo test --workspace --all-targets --locked --no-fail-fast
# The doc examples that run are in the crates rail integrators build
# against; every other crate's examples are ```text (rustdoc over all
# fifty crates to find none took a minute).
cargo test --doc --locked -p relay-rail-sdk -p relay-plugin-api -p relay-plugin-native -p relay-plugin-wasm
fi

step "soak"
# Five minutes of mixed traffic over two replicas on one Postgres with a
# relayer key pool, faults on a schedule, invariants checked on the chains
# (conformance/soak, docs/soak.md); it fails on any broken invariant. The
# report lands beside the build.
"$CARGO_TARGET_DIR/debug/relay-soak" --relay "$CARGO_TARGET_DIR/debug/relay" \
  --plugins "$RELAY_TEST_PLUGINS" --minutes "${RELAY_SOAK_MINUTES:-5}" \
  --report "$CARGO_TARGET_DIR/soak/report"
step "done"
