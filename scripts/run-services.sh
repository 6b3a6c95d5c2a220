#!/usr/bin/env bash
# Runs logs-api and cdn-api; Ctrl-C stops both. Once both answer, prints their addresses and the
# dev keys again (from the keys file, when given): the services' start-up lines scroll the ones
# `just run` printed first out of sight.
set -euo pipefail
bin=${1:-target/debug}
keys_file=${2:-}
# members' second factors need a sealing key (docs/operations.md "Second factors"); a local run
# makes one once and keeps it beside the dev keys, so a restart can still check the codes
if [ -z "${SECOND_FACTOR_KEY:-}" ]; then
  key_file=target/dev-second-factor.key
  if [ ! -s "$key_file" ]; then
    mkdir -p target
    (umask 077 && head -c 32 /dev/urandom | base64 > "$key_file")
  fi
  SECOND_FACTOR_KEY=$(cat "$key_file")
  export SECOND_FACTOR_KEY
fi
"$bin/logs-api" &
logs_pid=$!
"$bin/cdn-api" &
cdn_pid=$!
trap 'kill $logs_pid $cdn_pid 2>/dev/null || true; wait $logs_pid $cdn_pid 2>/dev/null || true' EXIT INT TERM

api=${CDN_API_ADDR:-127.0.0.1:8080}
logs=${LOGS_API_ADDR:-127.0.0.1:8081}
console=${CONSOLE_ADDR:-127.0.0.1:8082}
up() { command -v curl >/dev/null && curl -fsS -o /dev/null --max-time 1 "http://$1/healthz"; }
for _ in $(seq 1 300); do
  if ! kill -0 $logs_pid 2>/dev/null || ! kill -0 $cdn_pid 2>/dev/null; then
    break
  fi
  if up "$api" && up "$logs"; then
    key() { [ -n "$keys_file" ] && sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$keys_file"; }
    cat <<BANNER

================================================================================
Stowage is running (Ctrl-C stops it)
  API host:        http://$api/v1
  Ingestion host:  http://$logs/v1
  Public delivery: http://$api/cdn/dev/<key>
  Web console:     http://$console/
  developer key:   $(key developerKey)
  server key:      $(key serverKey)   (join code devsrv)
================================================================================

BANNER
    break
  fi
  sleep 0.2
done
# the first to stop ends the run (the trap stops the other)
wait -n $logs_pid $cdn_pid
