#!/usr/bin/env bash
# `just bench` / `just bench-quick`: installs the load tools when missing (Debian packages), builds
# release binaries, and runs scripts/bench.py, which writes docs/benchmarks.md and
# target/bench/results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || missing+=(nginx-light)
command -v hyperfine >/dev/null || missing+=(hyperfine)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
scripts/ensure-postgres.sh
cargo build --release -q -p cdn-api -p logs-api -p stowctl
exec python3 scripts/bench.py "$mode"
