#!/usr/bin/env bash
# The Debian packages the Rust build links against: OpenSSL's headers and
# pkg-config (reqwest's native-tls, for https RPCs and upstreams). Installs
# them with apt when missing (root or passwordless sudo needed).
set -euo pipefail
if pkg-config --exists openssl 2>/dev/null; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo -n"
DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libssl-dev pkg-config >&2
