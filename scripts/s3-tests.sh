#!/usr/bin/env bash
# Runs the representative CDN integration tests (upload, list, delivery with Range, delete, bulk,
# large streamed uploads, replacement) against a real S3-protocol server: moto's server mode from
# PyPI, installed into .tools/moto and started on loopback, stopped by PID afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.tools/moto
if [ ! -x "$VENV/bin/moto_server" ]; then
  echo "s3-tests: installing moto[server] into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q 'moto[server]'
fi
PORT=${MOTO_PORT:-19000}
"$VENV/bin/moto_server" -H 127.0.0.1 -p "$PORT" > target/moto.log 2>&1 &
MOTO_PID=$!
trap 'kill $MOTO_PID 2>/dev/null || true; wait $MOTO_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORT/" >/dev/null 2>&1 && break
  sleep 0.1
done
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$PORT" AWS_ALLOW_HTTP=true
BUCKET=stowage-test
curl -sf -X PUT "$AWS_ENDPOINT_URL/$BUCKET" >/dev/null
export STOWAGE_TEST_S3_BUCKET=$BUCKET
filter='test(upload_list_and_deliver) | test(delivery_ranges_conditionals_and_head) | test(deletes_are_idempotent) | test(bulk_uploads_are_independent_per_file) | test(oversize_files_are_refused_while_streaming) | test(replacing_an_object_swaps_bytes_and_removes_the_old_ones) | test(concurrent_uploads_to_one_key_never_mix) | test(content_type_comes_from_the_bytes)'
if command -v cargo-nextest >/dev/null; then
  cargo nextest run -p stowage-tests --test it -E "$filter" --no-fail-fast
else
  for t in upload_list_and_deliver delivery_ranges_conditionals_and_head deletes_are_idempotent bulk_uploads_are_independent_per_file oversize_files_are_refused_while_streaming replacing_an_object_swaps_bytes_and_removes_the_old_ones concurrent_uploads_to_one_key_never_mix content_type_comes_from_the_bytes; do
    cargo test -p stowage-tests --test it "$t"
  done
fi
# Content-Type is set on the stored S3 objects (signed requests through boto3, which moto ships)
"$VENV/bin/python" - "$AWS_ENDPOINT_URL" "$BUCKET" <<'PY'
import sys
import boto3
endpoint, bucket = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=endpoint)
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, MaxKeys=1000).get("Contents", [])]
assert keys, "the tests stored objects in the bucket"
types = {s3.head_object(Bucket=bucket, Key=k).get("ContentType") for k in keys[:100]}
assert "image/png" in types, types
print(f"s3-tests: {len(keys)} objects in the bucket; content types set: {sorted(t for t in types if t)}")
PY
