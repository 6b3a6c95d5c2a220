#!/usr/bin/env bash
# Runs logs-api in the background and cdn-api in the foreground; Ctrl-C stops both.
set -euo pipefail
bin=${1:-target/debug}
"$bin/logs-api" &
logs_pid=$!
trap 'kill $logs_pid 2>/dev/null || true; wait $logs_pid 2>/dev/null || true' EXIT INT TERM
"$bin/cdn-api"
