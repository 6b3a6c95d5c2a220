#!/usr/bin/env bash
# `just test`'s proxy test: both services behind deploy/nginx/stowage.conf (the shipped file, with
# its `tls-only` lines left out, the name set to 127.0.0.1 and the ports moved), on a fresh
# database provisioned like `just run`'s. Checks what the file is for: routing to the right host,
# bodies over nginx's 1 MiB default, forwarded host and scheme believed from the trusted proxy
# (upload URLs on the proxy's address), /metrics kept private, request ids passed through.
# Installs Debian's nginx-light when nginx is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nginx >/dev/null 2>&1; then
  echo "nginx-e2e: installing nginx-light (Debian package)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nginx-light >/dev/null
fi
scripts/ensure-postgres.sh
WORK="$PWD/target/nginx-e2e"
rm -rf "$WORK" && mkdir -p "$WORK"
DB=stowage_nginx_e2e
psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
PROXY=127.0.0.1:18390
CONSOLE_PROXY=127.0.0.1:18391
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB"
export CDN_API_ADDR=127.0.0.1:18380 LOGS_API_ADDR=127.0.0.1:18381 CONSOLE_ADDR=127.0.0.1:18382
export OBJECT_STORE_URL="file://$WORK/objects" RUST_LOG=warn
export PUBLIC_BASE_URL="http://$PROXY/cdn" TRUSTED_PROXIES=127.0.0.1
cargo build -q -p cdn-api -p logs-api -p stowctl
KEY=$(target/debug/stowctl --json dev-setup | python3 -c 'import json,sys; print(json.load(sys.stdin)["developerKey"])')
target/debug/cdn-api > "$WORK/cdn.log" 2>&1 &
CDN_PID=$!
target/debug/logs-api > "$WORK/logs.log" 2>&1 &
LOGS_PID=$!
# the scheme forwarded is https, as it is behind the TLS listener the test leaves out
grep -v 'tls-only' deploy/nginx/stowage.conf \
  | sed -e "s/127.0.0.1:8080/$CDN_API_ADDR/; s/127.0.0.1:8081/$LOGS_API_ADDR/; s/127.0.0.1:8082/$CONSOLE_ADDR/" \
        -e "s/server_name stowage.example.com;/listen $PROXY; server_name 127.0.0.1;/" \
        -e "s/server_name console.stowage.example.com;/listen $CONSOLE_PROXY; server_name 127.0.0.1;/" \
        -e 's/X-Forwarded-Proto $scheme;/X-Forwarded-Proto https;/' \
  > "$WORK/stowage.conf"
grep -q 'X-Forwarded-Proto https;' "$WORK/stowage.conf"
grep -q "listen $CONSOLE_PROXY;" "$WORK/stowage.conf"
cat > "$WORK/nginx.conf" <<CONF
# workers run as this user: started as root, nginx would otherwise switch them to nobody, who
# cannot write the proxy's temp files under a private checkout (a clone in a mktemp directory)
user $(id -un) $(id -gn);
worker_processes 1; daemon off; pid $WORK/nginx.pid; error_log $WORK/nginx-error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx-body; proxy_temp_path $WORK/nginx-proxy;
  fastcgi_temp_path $WORK/nginx-fcgi; uwsgi_temp_path $WORK/nginx-uwsgi; scgi_temp_path $WORK/nginx-scgi;
  include $WORK/stowage.conf;
}
CONF
nginx -c "$WORK/nginx.conf" &
NGINX_PID=$!
trap 'kill $CDN_PID $LOGS_PID $NGINX_PID 2>/dev/null || true; wait $CDN_PID $LOGS_PID $NGINX_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://$PROXY/readyz" >/dev/null 2>&1 && curl -sf "http://$LOGS_API_ADDR/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
if ! curl -sf "http://$PROXY/readyz" >/dev/null; then
  echo "nginx-e2e: the stack did not come up" >&2
  tail -5 "$WORK"/*.log >&2
  exit 1
fi
export KEY PROXY CONSOLE_PROXY CDN_API_ADDR WORK
python3 - <<'PY'
import json, os, subprocess, sys, time, urllib.request, urllib.error
proxy, key, work = os.environ["PROXY"], os.environ["KEY"], os.environ["WORK"]
base = f"http://{proxy}"

def curl(*args):
    out = subprocess.run(["curl", "-sS", "-w", "\n%{http_code}", *args], check=True, capture_output=True).stdout
    body, _, status = out.rpartition(b"\n")
    return int(status), body

def check(cond, what):
    if not cond:
        sys.exit(f"nginx-e2e: FAILED: {what}")
    print(f"nginx-e2e: ok: {what}", file=sys.stderr)

auth = ["-H", f"Authorization: Bearer {key}"]
# a 5 MiB file: over nginx's 1 MiB default body size
big = os.path.join(work, "big.png")
with open(big, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + os.urandom(5 * 1024 * 1024))
status, body = curl(*auth, "-F", f"file=@{big}", "-F", "path=shots", f"{base}/v1/objects")
check(status == 200, f"a 5 MiB upload through the proxy answers 200 ({status} {body[:200]!r})")
status, body = curl(*auth, f"{base}/v1/objects?path=shots")
listing = json.loads(body)
check(status == 200 and listing["objects"][0]["key"] == "shots/big.png", "listing through the proxy")
public = listing["objects"][0]["publicUrl"]
check(public.startswith(f"{base}/cdn/"), f"publicUrl is on the proxy ({public})")
got = subprocess.run(["curl", "-sS", public], check=True, capture_output=True).stdout
check(got == open(big, "rb").read(), "public delivery through the proxy returns the same bytes")
status, body = curl(*auth, f"{base}/v1/presigned-url?path=mugshots")
upload_url = json.loads(body)["uploadUrl"]
check(upload_url.startswith(f"https://{proxy}/v1/presigned-url/"),
      f"uploadUrl is built from the forwarded scheme and host, believed from the trusted proxy ({upload_url})")
upload_url = upload_url.replace("https://", "http://", 1)  # the test's proxy has no TLS listener
png = os.path.join(work, "m.png")
with open(png, "wb") as f:
    f.write(open(big, "rb").read()[:1024])
status, body = curl("-F", f"file=@{png}", upload_url)
check(status == 200, f"an upload through that URL answers 200 ({status})")
status, body = curl(*auth, "-H", "Content-Type: application/json", "-d",
                    '{"batch_id":"nginx-0001","events":[{"level":"info","message":"through nginx"}]}',
                    f"{base}/v1/servers/devsrv/logs")
check(status == 202 and json.loads(body)["accepted"], f"ingestion is routed to logs-api ({status} {body[:200]!r})")
now = time.time()
iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
status, body = curl(*auth, "-H", "Content-Type: application/json", "-d",
                    json.dumps({"serverId": "devsrv", "from": iso(now - 3600), "to": iso(now + 300)}),
                    f"{base}/v1/logs/query")
check(status == 200 and json.loads(body)["events"][0]["message"] == "through nginx", "log query through the proxy")
# a live tail through the proxy: events pass as they come (X-Accel-Buffering: no), not at the end
tail = subprocess.Popen(["curl", "-sN", "--max-time", "15", *auth, f"{base}/v1/logs/tail?serverId=devsrv"],
                        stdout=subprocess.PIPE)
first = tail.stdout.readline()  # `retry: 2000`: the tail is open
status, _ = curl(*auth, "-H", "Content-Type: application/json", "-d",
                 '{"batch_id":"nginx-0002","events":[{"level":"info","message":"tailed through nginx"}]}',
                 f"{base}/v1/servers/devsrv/logs")
seen = False
for line in tail.stdout:
    if b"tailed through nginx" in line:
        seen = True
        break
tail.kill()
check(first.startswith(b"retry:") and seen, "a live tail through the proxy sees a new event while open")
status, _ = curl(f"{base}/metrics")
check(status == 404, f"/metrics is not served through the proxy ({status})")
status, _ = curl(f"http://{os.environ['CDN_API_ADDR']}/metrics")
check(status == 200, "/metrics answers on the instance itself")
headers = subprocess.run(["curl", "-sS", "-D", "-", "-o", "/dev/null", f"{base}/v1/whoami", *auth], check=True, capture_output=True).stdout.decode()
check("x-request-id: req_" in headers.lower(), "X-Request-Id comes through")
# the console on its own host name: behind HTTPS (forwarded) its cookie is Secure, and its /api works
console = f"http://{os.environ['CONSOLE_PROXY']}"
signin = subprocess.run(["curl", "-sS", "-D", "-", "-o", "/dev/null", "-H", "Content-Type: application/json",
                         "-d", json.dumps({"key": key}), f"{console}/session"], check=True, capture_output=True).stdout.decode()
cookie_line = next((l for l in signin.splitlines() if l.lower().startswith("set-cookie:")), "")
check("Secure" in cookie_line and "HttpOnly" in cookie_line and "SameSite=Strict" in cookie_line,
      f"the console's session cookie is Secure behind HTTPS ({cookie_line.strip()})")
cookie = cookie_line.split(":", 1)[1].split(";", 1)[0].strip()
status, body = curl("-H", f"Cookie: {cookie}", f"{console}/api/v1/whoami")
check(status == 200 and json.loads(body)["organization"]["name"], "the console's /api acts as the signed-in key through the proxy")
status, body = curl(f"{console}/")
check(status == 200 and b'src="/assets/app.js"' in body, "the console page through the proxy")
PY
echo "nginx-e2e: passed" >&2
