#!/usr/bin/env bash
# Browser end-to-end tests: installs Debian's chromium and chromium-driver when missing, then runs
# the ignored tests: an upload through an upload URL from another origin, and the console
# (screenshots under target/console-screenshots/).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  echo "e2e: installing chromium and chromium-driver (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi
cargo test -p stowage-tests --test e2e_browser -- --ignored --nocapture
# a test per flow, two at a time (each has its own app and browser)
cargo test -p stowage-tests --test console_browser -- --ignored --nocapture --test-threads=2
