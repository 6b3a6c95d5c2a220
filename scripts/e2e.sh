#!/usr/bin/env bash
# Browser end-to-end test: installs Debian's chromium when missing, then runs the ignored test.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  echo "e2e: installing chromium (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
cargo test -p stowage-tests --test e2e_browser -- --ignored --nocapture
