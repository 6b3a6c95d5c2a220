#!/usr/bin/env bash
# Contract test: schemathesis (PyPI, in .tools/schemathesis) against both running services with a
# provisioned key. Fails on any 5xx and on any response that contradicts the OpenAPI document.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.tools/schemathesis
if [ ! -x "$VENV/bin/st" ]; then
  echo "contract: installing schemathesis into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q schemathesis
fi
scripts/ensure-postgres.sh
DB=stowage_contract
psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB"
export CDN_API_ADDR=127.0.0.1:18180 LOGS_API_ADDR=127.0.0.1:18181 CONSOLE_ADDR=127.0.0.1:18182
export OBJECT_STORE_URL="file://$PWD/target/contract-objects" RUST_LOG=warn
export RATE_LIMIT_PER_SECOND=100000 RATE_LIMIT_BURST=100000
# as an operator configures it: members may turn on a second factor
SECOND_FACTOR_KEY=$(head -c 32 /dev/urandom | base64)
export SECOND_FACTOR_KEY
cargo build -q -p cdn-api -p logs-api -p stowctl
KEYS=$(target/debug/stowctl --json dev-setup)
DEV_KEY=$(echo "$KEYS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["developerKey"])')
SERVER_KEY=$(echo "$KEYS" | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverKey"])')
target/debug/cdn-api > target/contract-cdn.log 2>&1 &
CDN_PID=$!
target/debug/logs-api > target/contract-logs.log 2>&1 &
LOGS_PID=$!
trap 'kill $CDN_PID $LOGS_PID 2>/dev/null || true; wait $CDN_PID $LOGS_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://$CDN_API_ADDR/healthz" >/dev/null 2>&1 && curl -sf "http://$LOGS_API_ADDR/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
status=0
for target in "http://$CDN_API_ADDR|$DEV_KEY" "http://$LOGS_API_ADDR|$SERVER_KEY"; do
  base=${target%%|*}
  KEY=${target##*|}
  echo "contract: $base" >&2
  "$VENV/bin/st" run "$base/v1/openapi.json" \
    --url "$base" \
    --header "Authorization: Bearer $KEY" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "${CONTRACT_EXAMPLES:-25}" \
    --exclude-path-regex '^/cdn/' --suppress-health-check all || status=1
done
# the same document through the console's /api, signed in as the organization's owner (a member):
# the members, keys, audit and account routes answer a member, not only refuse a key
TOKEN=$(target/debug/stowctl --json member invite --org dev --role owner \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
SESSION=$(curl -s -D - "http://$CONSOLE_ADDR/invitation/accept" -H 'Content-Type: application/json' \
  -d '{"token": "'"$TOKEN"'", "login": "contract-owner", "password": "tangerine Kettle orbit 77"}')
COOKIE=$(printf '%s' "$SESSION" | sed -n 's/^[Ss]et-[Cc]ookie: \([^;]*\).*/\1/p' | head -1)
CSRF=$(printf '%s' "$SESSION" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["csrfToken"])')
echo "contract: http://$CONSOLE_ADDR/api as a member" >&2
"$VENV/bin/st" run "http://$CDN_API_ADDR/v1/openapi.json" \
  --url "http://$CONSOLE_ADDR/api" \
  --header "Cookie: $COOKIE" --header "X-CSRF-Token: $CSRF" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-examples "${CONTRACT_EXAMPLES:-25}" \
  --include-path-regex '^/v1/(members|keys|audit|account)' || status=1
exit $status
