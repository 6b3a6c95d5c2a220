#!/usr/bin/env bash
# `just docs-check`: runs every curl recipe of README.md and docs/api.md (scripts/docs_check.py)
# against a fresh stack provisioned like `just run`'s (workspace `dev`, join code `devsrv`), so
# the recipes cannot drift from what the services answer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-postgres.sh
DB=stowage_docs_check
psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB"
export CDN_API_ADDR=127.0.0.1:18280 LOGS_API_ADDR=127.0.0.1:18281 CONSOLE_ADDR=127.0.0.1:18282
export DOCS_CHECK_DIR="$PWD/target/docs-check"
rm -rf "$DOCS_CHECK_DIR"
export OBJECT_STORE_URL="file://$DOCS_CHECK_DIR/objects" RUST_LOG=warn
# the alert recipes send to a local receiver over http (docs/api.md's hooks.example.com)
export ALERTS_ALLOW_INSECURE=true DOCS_CHECK_RECEIVER=127.0.0.1:18283
SECOND_FACTOR_KEY=$(head -c 32 /dev/urandom | base64)
export SECOND_FACTOR_KEY
cargo build -q -p cdn-api -p logs-api -p stowctl
KEYS=$(target/debug/stowctl --json dev-setup)
export KEY SERVER_KEY
KEY=$(echo "$KEYS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["developerKey"])')
SERVER_KEY=$(echo "$KEYS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverKey"])')
export API="http://$CDN_API_ADDR/v1" LOGS="http://$LOGS_API_ADDR/v1" CONSOLE="http://$CONSOLE_ADDR"
# the first owner's invitation, as docs/operations.md makes it (the Members recipes accept it)
export TOKEN
TOKEN=$(target/debug/stowctl --json member invite --org dev --role owner \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
mkdir -p target
target/debug/cdn-api > target/docs-check-cdn.log 2>&1 &
CDN_PID=$!
target/debug/logs-api > target/docs-check-logs.log 2>&1 &
LOGS_PID=$!
python3 scripts/docs_check_receiver.py "$DOCS_CHECK_RECEIVER" &
HOOK_PID=$!
trap 'kill $CDN_PID $LOGS_PID $HOOK_PID 2>/dev/null || true; wait $CDN_PID $LOGS_PID $HOOK_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://$CDN_API_ADDR/readyz" >/dev/null 2>&1 && curl -sf "http://$LOGS_API_ADDR/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
python3 scripts/docs_check.py README.md docs/api.md
