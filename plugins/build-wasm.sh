#!/usr/bin/env bash
# Builds a rail packaging crate (a cdylib using relay_plugin_wasm::export_wasm_rail!)
# as a wasm component of the relay:rail world.
#
#   plugins/build-wasm.sh <crate> <out.wasm>
#   plugins/build-wasm.sh --toolchain     # only install the toolchain when missing
#
# 1. Compiles <crate> for wasm32-unknown-unknown with the workspace's `wasm` profile:
#    - with rustup's wasm32-unknown-unknown target when it is installed;
#    - otherwise with Debian's rustc-web (+ rust-web-src for -Zbuild-std), installing
#      rustc-web cargo-web rust-web-src lld lld-22 with apt-get when they are missing.
#      That toolchain is a different rustc, so it gets its own target directory
#      ($RELAY_WASM_TARGET_DIR, default ~/.cache/relay-target-wasm).
# 2. Turns the core module into a component with relay-componentize (built with the
#    ordinary host toolchain), which validates it and refuses any import outside
#    relay:rail (no WASI).
#
# Environment: RELAY_WASM_FEATURES=a,b enables cargo features of <crate> (the
# packaging shells pick their rail by feature); RELAY_WASM_MANIFEST builds a
# crate that is its own workspace; RELAY_WASM_CORE=1 outputs the core module
# instead of a component;
# RELAY_WASM_TOOLCHAIN=rustup|debian forces a toolchain;
# RELAY_WASM_TARGET_DIR overrides the wasm target directory;
# RELAY_COMPONENTIZE names a relay-componentize binary already built (the
# test script's: `cargo run` here would resolve features for that one
# package and rebuild its dependencies).
set -euo pipefail

if [[ $# -ne 2 && ${1:-} != --toolchain ]]; then
    echo "usage: $0 <crate> <out.wasm> | $0 --toolchain" >&2
    exit 2
fi
crate=${1:-}
out=${2:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=wasm32-unknown-unknown
host_cargo=${CARGO:-cargo}
debian_packages=(rustc-web cargo-web rust-web-src lld lld-22)

log() { echo "build-wasm: $*" >&2; }

has_rustup_target() {
    command -v rustup >/dev/null 2>&1 &&
        rustup target list --installed 2>/dev/null | grep -qx "$target"
}

has_debian_toolchain() {
    [[ -x /usr/bin/rustc && -x /usr/bin/cargo && -d /usr/lib/rustlib/src/rust/library/std ]] &&
        command -v rust-lld >/dev/null 2>&1
}

install_debian_toolchain() {
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 || {
            log "need root to apt-get install ${debian_packages[*]}"
            exit 1
        }
        sudo=(sudo)
    fi
    log "installing ${debian_packages[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debian_packages[@]}" >&2
}

toolchain=${RELAY_WASM_TOOLCHAIN:-}
if [[ -z $toolchain ]]; then
    if has_rustup_target; then toolchain=rustup; else toolchain=debian; fi
fi

# Extra cargo arguments: the crate's features, and, for a crate that is its
# own workspace (RELAY_WASM_MANIFEST=path/Cargo.toml), its manifest.
features=()
[[ -n ${RELAY_WASM_FEATURES:-} ]] && features=(--features "$RELAY_WASM_FEATURES")
[[ -n ${RELAY_WASM_MANIFEST:-} ]] && features+=(--manifest-path "$RELAY_WASM_MANIFEST")

# The guest's shadow stack (the first bytes of its linear memory; an
# overflow traps, it never runs into the heap): 256 KiB rather than rustc's
# 1 MiB, so a fresh instance's memory is a third the size and the host's
# per-call reset scans a third the pages. Rails parse JSON into typed
# values and recurse little.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C link-arg=-zstack-size=262144"

# `--toolchain`: only make sure the toolchain is there (the test script
# installs it while the workspace compiles).
if [[ $crate == --toolchain ]]; then
    [[ $toolchain == debian ]] && { has_debian_toolchain || install_debian_toolchain; }
    exit 0
fi

cd "$root"
case $toolchain in
rustup)
    wasm_target_dir=${RELAY_WASM_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}}
    log "compiling $crate with rustup's $target target"
    CARGO_TARGET_DIR=$wasm_target_dir cargo build --quiet --profile wasm --target "$target" -p "$crate" "${features[@]}"
    ;;
debian)
    has_debian_toolchain || install_debian_toolchain
    wasm_target_dir=${RELAY_WASM_TARGET_DIR:-$HOME/.cache/relay-target-wasm}
    log "compiling $crate with Debian rustc-web ($(/usr/bin/rustc --version)) and build-std"
    # A clean environment for the other rustc: nothing from an enclosing cargo or
    # rustup may leak into it.
    env -u RUSTC_WRAPPER -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS -u RUSTUP_TOOLCHAIN -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
        -u CARGO_BUILD_TARGET -u CARGO_MAKEFLAGS -u MAKEFLAGS -u MFLAGS \
        RUSTC_BOOTSTRAP=1 RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
        CARGO_TARGET_DIR="$wasm_target_dir" \
        /usr/bin/cargo build --quiet --profile wasm -Zbuild-std=std,panic_abort \
        --target "$target" -p "$crate" "${features[@]}"
    ;;
*)
    log "RELAY_WASM_TOOLCHAIN must be rustup or debian, not $toolchain"
    exit 2
    ;;
esac

core="$wasm_target_dir/$target/wasm/${crate//-/_}.wasm"
[[ -f $core ]] || {
    log "expected $core; is $crate a cdylib?"
    exit 1
}

mkdir -p "$(dirname "$out")"
if [[ -n ${RELAY_WASM_CORE:-} ]]; then
    # A core module (e.g. for runtimes that take no components, like Extism).
    cp "$core" "$out"
    exit 0
fi
log "componentizing $core"
if [[ -n ${RELAY_COMPONENTIZE:-} ]]; then
    [[ -x $RELAY_COMPONENTIZE ]] || {
        log "RELAY_COMPONENTIZE=$RELAY_COMPONENTIZE is not an executable"
        exit 1
    }
    "$RELAY_COMPONENTIZE" "$core" "$out"
else
    "$host_cargo" run --quiet -p relay-componentize -- "$core" "$out"
fi
