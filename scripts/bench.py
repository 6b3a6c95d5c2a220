#!/usr/bin/env python3
"""Stowage benchmarks. `just bench` (full) and `just bench-quick` (small data sets) call this.

Starts everything it needs on loopback (its own PostgreSQL cluster on port 15432, configured as
docs/operations.md recommends, release `cdn-api` and `logs-api`, an nginx baseline), measures with
wrk and hyperfine (a small sequential driver only for cursor-chained query walks), stops what it
started by PID, and writes docs/benchmarks.md and target/bench/results.json.
"""
import base64, concurrent.futures, datetime, glob, hashlib, hmac, http.client, json, os, platform, shutil, signal, statistics, subprocess, sys, threading, time, urllib.request

MODE = sys.argv[1] if len(sys.argv) > 1 else "quick"
QUICK = MODE != "full"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")
WORK = "/tmp/stowage-bench"
DB_NAME = "stowage_bench"
PG_PORT = 15432
DB = f"postgres://postgres@127.0.0.1:{PG_PORT}/{DB_NAME}"
CDN, LOGS, NGINX = 18080, 18081, 18090
SECRET = "bench-signing-secret-0123456789"
RUNS = 3
DURATION = 2 if QUICK else 15  # quick: 33 wrk runs must fit the 3-minute budget
EVENTS = 200_000 if QUICK else 10_000_000
OBJECTS = 100_000 if QUICK else 1_000_000
COPY_ROWS = 50_000 if QUICK else 500_000
BIG_UPLOAD_MIB = 100
# The columns of `log_events` that the ingestion rounds export and COPY back (all but id)
EVENT_COLUMNS = ("org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, event_type, occurred_at, player_id, target_player_id, "
                 "player_identifiers, target_player_identifiers, resource, trace_id, environment, message, data")
# ... and of `log_runs`, the words of each run of up to 50 events that message search reads (migration 13)
RUN_COLUMNS = "server_id, occurred_from, occurred_to, words"

procs = []
results = []
tables = {}


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, text=True, capture_output=True, **kw).stdout


def psql(sql, db=DB_NAME):
    return sh(f"psql -h 127.0.0.1 -p {PG_PORT} -U postgres -d {db} -v ON_ERROR_STOP=1 -Atq", input=sql).strip()


def psql_parallel(scripts):
    """Runs each script in its own session, all at once (one per core: an INSERT … SELECT runs
    on one core)."""
    with concurrent.futures.ThreadPoolExecutor(len(scripts)) as pool:
        return [f.result() for f in [pool.submit(psql, x) for x in scripts]]


def start(cmd, env=None, name=None, user=None):
    p = subprocess.Popen(cmd, env={**os.environ, **(env or {})}, stdout=open(f"{WORK}/{name}.log", "w"), stderr=subprocess.STDOUT, user=user)
    procs.append(p)
    return p


def stop_all():
    # services first, then the database (SIGINT: PostgreSQL's fast shutdown)
    for p in sorted(procs, key=lambda p: p.args[0].endswith("/postgres")):
        if p.poll() is None:
            p.send_signal(signal.SIGINT if p.args[0].endswith("/postgres") else signal.SIGTERM)
            if p.args[0].endswith("/postgres"):
                p.wait(timeout=60)
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
    procs.clear()


def wait_http(url, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except Exception:
            time.sleep(0.2)
    raise SystemExit(f"bench: {url} did not come up")


def api(method, path, key=None, body=None, host=CDN, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", host, timeout=60)
    h = {"Authorization": f"Bearer {key}"} if key else {}
    h.update(headers or {})
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
        h["Content-Type"] = "application/json"
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, (json.loads(data) if data[:1] in (b"{", b"[") else data)


def multipart(field, filename, content, ctype="application/octet-stream", extra=None):
    boundary = "benchboundary7MA4YWxkTrZu0gW"
    parts = []
    for k, v in (extra or {}).items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\nContent-Type: {ctype}\r\n\r\n'.encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def wrk(url, script, conns=64, threads=2, duration=DURATION, env=None):
    out = sh(f"wrk -t{threads} -c{conns} -d{duration}s --timeout 10s -s {script} '{url}'", env={**os.environ, **(env or {})})
    line = next(l for l in out.splitlines() if l.startswith("BENCH_JSON "))
    r = json.loads(line[len("BENCH_JSON "):])
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    r["mbps"] = r["bytes"] / (r["duration_us"] / 1e6) / 1e6
    return r


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def record(name, values, unit, baseline=None, target=None, note=""):
    s = spread(values)
    base = spread(baseline)["median"] if isinstance(baseline, list) else baseline
    ratio = (s["median"] / base) if base else None
    results.append({"name": name, "value": round(s["median"], 3), "unit": unit, "baseline": None if base is None else round(base, 3),
                    "ratio": None if ratio is None else round(ratio, 3), "runs": len(values), "min": round(s["min"], 3), "max": round(s["max"], 3),
                    "target": target, "note": note})
    log(f"{name}: {s['median']:.2f} {unit}" + (f" (baseline {base:.2f}, ratio {ratio:.2f})" if base else ""))


def pct(values, p):
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100 * (len(v) - 1)))))
    return v[k]


def service_env(env_extra=None):
    """The environment both services start with."""
    return {"DATABASE_URL": DB, "CDN_API_ADDR": f"127.0.0.1:{CDN}", "LOGS_API_ADDR": f"127.0.0.1:{LOGS}", "CONSOLE_ADDR": "off",
           "OBJECT_STORE_URL": f"file://{WORK}/objects", "STOWAGE_SIGNING_SECRET": SECRET, "RATE_LIMIT_PER_SECOND": "1000000",
           "RATE_LIMIT_BURST": "1000000", "RUST_LOG": "warn", "DATABASE_MAX_CONNECTIONS": "16",
           # bench_lifecycle waits for a pass; with no rule a pass is one small query
           "LIFECYCLE_INTERVAL_SECONDS": "1",
           # bench_alerts delivers to a receiver on loopback; destinations are sealed with the key
           "ALERTS_ALLOW_INSECURE": "true", "SECOND_FACTOR_KEY": base64.b64encode(b"b" * 32).decode(),
           **(env_extra or {})}


def services(env_extra=None):
    env = service_env(env_extra)
    cdn = start([f"{BIN}/cdn-api"], env, "cdn-api")
    logs = start([f"{BIN}/logs-api"], env, "logs-api")
    wait_http(f"http://127.0.0.1:{CDN}/healthz")
    wait_http(f"http://127.0.0.1:{LOGS}/healthz")
    return cdn, logs


def pg_settings():
    """The server settings docs/operations.md recommends, sized to this machine."""
    mem_mib = int(next(l for l in open("/proc/meminfo") if l.startswith("MemTotal")).split()[1]) // 1024
    return {
        "shared_buffers": f"{min(mem_mib // 4, 8192)}MB", "effective_cache_size": f"{mem_mib // 2}MB",
        "maintenance_work_mem": "1GB", "work_mem": "16MB", "wal_buffers": "64MB", "max_wal_size": "8GB",
        "checkpoint_timeout": "15min", "checkpoint_completion_target": "0.9", "wal_compression": "lz4",
        "random_page_cost": "1.1", "max_connections": "200", "jit": "off",
        # BENCH_PG_EXTRA="name=value,…": settings under trial, on top of the recommended ones
        **dict(x.split("=", 1) for x in os.environ.get("BENCH_PG_EXTRA", "").split(",") if x),
    }


def start_postgres():
    """A dedicated cluster, so the figures never depend on how the machine's own one is tuned."""
    bindir = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))[-1].rsplit("/", 1)[0]
    data = f"{WORK}/pg"
    user = "postgres" if os.geteuid() == 0 else None  # PostgreSQL refuses to run as root
    os.makedirs(data, exist_ok=True)
    if user:
        shutil.chown(data, user)
    subprocess.run([f"{bindir}/initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync"], check=True, capture_output=True, user=user)
    opts = [f"-c{k}={v}" for k, v in pg_settings().items()]
    start([f"{bindir}/postgres", "-D", data, "-p", str(PG_PORT), "-k", data, "-c", "listen_addresses=127.0.0.1"] + opts, name="postgres", user=user)
    for _ in range(100):
        if subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(PG_PORT)]).returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit("bench: the benchmark PostgreSQL cluster did not start")


def setup():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(f"{WORK}/objects", exist_ok=True)
    start_postgres()
    psql(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)", db="postgres")
    psql(f"CREATE DATABASE {DB_NAME}", db="postgres")
    out = sh(f"{BIN}/stowctl --json dev-setup", env={**os.environ, "DATABASE_URL": DB})
    keys = json.loads(out)
    psql("UPDATE plans SET max_file_size = 209715200, concurrent_searches = 64")
    with open(f"{WORK}/nginx.conf", "w") as f:
        f.write(f"""worker_processes 2; pid {WORK}/nginx.pid; error_log {WORK}/nginx-error.log; daemon off;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  types {{ image/png png; application/octet-stream bin; }} default_type application/octet-stream;
  client_body_temp_path {WORK}/nginx-body; proxy_temp_path {WORK}/nginx-proxy; fastcgi_temp_path {WORK}/nginx-fcgi;
  uwsgi_temp_path {WORK}/nginx-uwsgi; scgi_temp_path {WORK}/nginx-scgi;
  server {{ listen 127.0.0.1:{NGINX}; root {WORK}/objects; }} }}
""")
    start(["nginx", "-c", f"{WORK}/nginx.conf"], name="nginx")
    return keys


def machine():
    mem = next(l for l in open("/proc/meminfo") if l.startswith("MemTotal")).split()[1]
    return {"cores": os.cpu_count(), "memory_gib": round(int(mem) / 1024 / 1024, 1), "kernel": platform.release(),
            "postgres": psql("SHOW server_version"), "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")}


def upload(key, name, content, path="bench"):
    body, ctype = multipart("file", name, content, extra={"path": path})
    status, res = api("POST", "/v1/objects", key, body, headers={"Content-Type": ctype})
    assert status == 200, (status, res)
    return res["object"]


def storage_path(key):
    return psql(f"SELECT storage_path FROM objects WHERE key = '{key}'")


def bench_delivery(key):
    os.makedirs(f"{WORK}/files", exist_ok=True)
    for label, size in (("10kb", 10 * 1024), ("1mib", 1024 * 1024)):
        obj = upload(key, f"{label}.bin", os.urandom(size))
        ours = obj["publicUrl"]
        theirs = f"http://127.0.0.1:{NGINX}/{storage_path(obj['key'])}"
        a, b = [], []
        for _ in range(RUNS):
            a.append(wrk(ours, "scripts/bench/report.lua"))
            b.append(wrk(theirs, "scripts/bench/report.lua"))
        assert all(r["non2xx"] == 0 and r["errors"] == 0 for r in a + b), (a, b)
        if label == "10kb":
            record("delivery_10kb_rps", [r["rps"] for r in a], "req/s", [r["rps"] for r in b], "≥ 0.8× nginx", "GET publicUrl, 64 connections, wrk -t2")
            record("delivery_10kb_p99_ms", [r["p99_us"] / 1000 for r in a], "ms", [r["p99_us"] / 1000 for r in b])
            etag = f'"{obj["etag"]}"'
            c = [wrk(ours, "scripts/bench/report.lua", env={"BENCH_INM": etag}) for _ in range(RUNS)]
            nginx_etag = urllib.request.urlopen(theirs).headers["ETag"]
            d = [wrk(theirs, "scripts/bench/report.lua", env={"BENCH_INM": nginx_etag}) for _ in range(RUNS)]
            record("delivery_304_rps", [r["rps"] for r in c], "req/s", [r["rps"] for r in d], None, "If-None-Match hits")
        else:
            record("delivery_1mib_mbps", [r["mbps"] for r in a], "MB/s", [r["mbps"] for r in b], None, "1 MiB objects, 64 connections")


def hyperfine(cmds, runs):
    out = f"{WORK}/hf.json"
    sh("hyperfine -N --warmup 1 --runs {} --export-json {} {}".format(runs, out, " ".join(f"'{c}'" for c in cmds)))
    return [r["times"] for r in json.load(open(out))["results"]]


def direct_writes(src, runs):
    """Seconds per durable write of `src` to a fresh file (write, fsync, close), in this process."""
    data = open(src, "rb").read()
    times = []
    for i in range(runs + 1):
        path = f"{WORK}/files/direct-{i}.out"
        started = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        times.append(time.perf_counter() - started)
        os.unlink(path)
    return times[1:]  # the first one warms up


def bench_upload(key):
    os.makedirs(f"{WORK}/files", exist_ok=True)
    big = f"{WORK}/files/10m.bin"
    data = os.urandom(10 * 1024 * 1024)
    with open(big, "wb") as f:
        f.write(data)
    mb = len(data) / 1e6
    # Uploads one after another on one kept-alive connection (wrk -c1), so the figure is the
    # upload itself, not a client process starting (curl's start-up alone is ~12 ms here; the
    # one-curl-per-upload figure is reported beside it). An upload is acknowledged only once its
    # bytes are on disk, so the baseline is a durable write too: write + fsync of a fresh file.
    body, ctype = multipart("file", "10m.bin", data, extra={"path": "bench"})
    with open(f"{WORK}/files/10m.body", "wb") as f:
        f.write(body)
    ours = [wrk(f"http://127.0.0.1:{CDN}/v1/objects", "scripts/bench/report.lua", conns=1, threads=1,
                env={"BENCH_AUTH": key, "BENCH_BODY_FILE": f"{WORK}/files/10m.body", "BENCH_CONTENT_TYPE": ctype}) for _ in range(RUNS)]
    assert all(x["non2xx"] == 0 and x["errors"] == 0 for x in ours), ours
    theirs = direct_writes(big, 15)
    curl = f"curl -s -o /dev/null -f -H \"Authorization: Bearer {key}\" -F file=@{big} -F path=bench http://127.0.0.1:{CDN}/v1/objects"
    dd = f"dd if={big} of={WORK}/files/dd.out bs=1M conv=fsync"
    dd_cache = f"dd if={big} of={WORK}/files/dd.out bs=1M"
    curls, dds, cached = hyperfine([curl, dd, dd_cache], 5)
    ms = lambda t: statistics.median(t) * 1000
    record("upload_10mib_mbps", [x["requests"] * mb / (x["duration_us"] / 1e6) for x in ours], "MB/s", [mb / t for t in theirs],
           "≥ 0.8× disk write",
           f"10 MiB multipart uploads in sequence on one connection (wrk -c1; p50 {statistics.median(x['p50_us'] for x in ours) / 1000:.1f} ms) "
           f"vs write+fsync of a fresh file (median {ms(theirs):.1f} ms). Same upload by one curl process each: {mb / statistics.median(curls):,.0f} MB/s; "
           f"`dd conv=fsync`: {mb / statistics.median(dds):,.0f} MB/s; dd to page cache only: {mb / statistics.median(cached):,.0f} MB/s")
    body, ctype = multipart("file", "small.bin", os.urandom(20 * 1024), extra={"path": "bench/small"})
    with open(f"{WORK}/files/20k.body", "wb") as f:
        f.write(body)
    r = [wrk(f"http://127.0.0.1:{CDN}/v1/objects", "scripts/bench/report.lua", conns=32,
             env={"BENCH_AUTH": key, "BENCH_BODY_FILE": f"{WORK}/files/20k.body", "BENCH_CONTENT_TYPE": ctype}) for _ in range(RUNS)]
    assert all(x["non2xx"] == 0 for x in r), r
    record("upload_20kb_rps", [x["rps"] for x in r], "req/s", None, None, "20 KB multipart uploads, 32 connections (same key: each replaces the last)")


def bench_rss(key):
    stop_all_services()
    cdn, logs = services()
    os.makedirs(f"{WORK}/files", exist_ok=True)
    big = f"{WORK}/files/100m.bin"
    with open(big, "wb") as f:
        for _ in range(BIG_UPLOAD_MIB):
            f.write(os.urandom(1024 * 1024))
    curl = f"curl -s -o /dev/null -f -H 'Authorization: Bearer {key}' -F file=@{big} -F path=bench/big http://127.0.0.1:{CDN}/v1/objects"
    t0 = time.time()
    ps = [subprocess.Popen(curl, shell=True) for _ in range(16)]
    codes = [p.wait() for p in ps]
    elapsed = time.time() - t0
    hwm = next(l for l in open(f"/proc/{cdn.pid}/status") if l.startswith("VmHWM")).split()[1]
    assert all(c == 0 for c in codes), codes
    record("upload_16x100mib_peak_rss_mib", [int(hwm) / 1024], "MiB", None, "< 256 MiB", f"16 concurrent {BIG_UPLOAD_MIB} MiB uploads took {elapsed:.1f} s; VmHWM of cdn-api")
    return cdn, logs


def bench_zip_rss(key):
    """Peak memory of a fresh cdn-api while 4 clients each download a folder of random 8 MiB
    files (incompressible) as one ZIP, for a folder of a quarter of ZIP's files and again once
    the folder holds all of them: the archive is streamed, so the peak should not grow with the
    folder (ratio about 1). The high-water mark is reset (`clear_refs`) before each download."""
    stop_all_services()
    cdn, logs = services()
    os.makedirs(f"{WORK}/files", exist_ok=True)
    files = 8 if QUICK else 32
    blob = f"{WORK}/files/8m.bin"
    with open(blob, "wb") as f:
        f.write(os.urandom(8 * 1024 * 1024))
    status = lambda field: int(next(l for l in open(f"/proc/{cdn.pid}/status") if l.startswith(field)).split()[1]) / 1024
    curl = (f"curl -s -o {WORK}/files/out-%d.zip -f -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' "
            f"-d '{{\"path\": \"zipme\"}}' http://127.0.0.1:{CDN}/v1/objects/zip")

    def peak(first, count):
        """Uploads files `first` to `count`, then the 4 downloads: (peak MiB, RSS before, seconds,
        ZIP bytes)."""
        for i in range(first, count):
            sh(f"curl -s -o /dev/null -f -H 'Authorization: Bearer {key}' -F 'file=@{blob};filename=f{i:03d}.bin' "
               f"-F path=zipme http://127.0.0.1:{CDN}/v1/objects")
        with open(f"/proc/{cdn.pid}/clear_refs", "w") as f:
            f.write("5")
        before = status("VmRSS")
        t0 = time.time()
        ps = [subprocess.Popen(curl % i, shell=True) for i in range(4)]
        codes = [p.wait() for p in ps]
        assert all(c == 0 for c in codes), codes
        size = os.path.getsize(f"{WORK}/files/out-0.zip")
        assert size > count * 8 * 1024 * 1024, size
        return status("VmHWM"), before, time.time() - t0, size

    small, small_before, _, small_size = peak(0, files // 4)
    big, big_before, elapsed, size = peak(files // 4, files)
    record("zip_4x_peak_rss_mib", [big], "MiB", [small], "does not grow with the folder",
           f"VmHWM of cdn-api during 4 concurrent ZIPs of {files} × 8 MiB files ({size / 2**20:.0f} MiB each, {elapsed:.1f} s; "
           f"RSS before {big_before:.0f} MiB); baseline: the same for the folder at {files // 4} files ({small_size / 2**20:.0f} MiB each; "
           f"RSS before {small_before:.0f} MiB)")
    return cdn, logs


def screenshot_png(w, h):
    """A `w` × `h` RGB PNG that compresses about as a game screenshot does: smooth gradients with
    every fourth row noise."""
    import zlib, struct
    ramp = bytes((x * 251 // (w * 3)) & 255 for x in range(w * 3))
    rows = []
    for y in range(h):
        # each noisy row its own noise (a repeated one would compress away)
        row = os.urandom(w * 3) if y % 4 == 0 else bytes(((b + y) & 255) for b in ramp[: 64]) * (w * 3 // 64) + ramp[: (w * 3) % 64]
        rows.append(b"\x00" + row)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b""))


def bench_renditions(key):
    """Renditions of a 1920×1080 PNG screenshot: the first of a box (made: read, decode, resize,
    encode, keep), a kept one against 10 KB delivery in the same run, and the peak RSS of a fresh
    cdn-api answering 16 first renditions of a 4K PNG at once (RENDITION_CONCURRENCY at its
    default, the number of CPUs)."""
    stop_all_services()
    services()
    png = screenshot_png(1920, 1080)
    shot = upload(key, "shot-1080p.png", png, path="bench/renditions")
    url = shot["publicUrl"]
    reps = 20 if QUICK else 40
    first = []
    for i in range(reps):
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"{url}?w={200 + i}&h={112 + i}&fit=cover&format=webp") as r:
            assert r.status == 200 and r.headers["Content-Type"] == "image/webp"
            r.read()
        first.append((time.perf_counter() - t0) * 1000)
    record("rendition_first_1080p_p95_ms", [pct(first, 95)], "ms", None, "≤ 80 ms",
           f"a new 200–240 px WebP box of a {len(png) // 1024} KiB 1920×1080 PNG each time; p50 {pct(first, 50):.1f} ms over {reps}")
    # the console's thumbnails: JPEG, cropped to fill
    kept_url = f"{url}?w=264&h=198&fit=cover&format=jpeg"
    kept_bytes = len(urllib.request.urlopen(kept_url).read())
    small = upload(key, "10kb-r.bin", os.urandom(10 * 1024), path="bench/renditions")
    a, b = [], []
    for _ in range(RUNS):
        a.append(wrk(kept_url, "scripts/bench/report.lua"))
        b.append(wrk(small["publicUrl"], "scripts/bench/report.lua"))
    assert all(r["non2xx"] == 0 and r["errors"] == 0 for r in a + b), (a, b)
    record("rendition_kept_rps", [r["rps"] for r in a], "req/s", [r["rps"] for r in b], "≥ 0.8× 10 KB delivery",
           f"a kept 264×198 JPEG rendition ({kept_bytes / 1024:.1f} KiB, the console's thumbnail), 64 connections; baseline: a 10 KB object, same run")
    big = upload(key, "shot-4k.png", screenshot_png(3840, 2160), path="bench/renditions")
    stop_all_services()
    cdn, _ = services()
    def one(i):
        with urllib.request.urlopen(f"{big['publicUrl']}?w={600 + i}&format=jpeg", timeout=120) as r:
            r.read()
            return r.status
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(one, range(16)))
    elapsed = time.time() - t0
    assert all(c == 200 for c in codes), codes
    hwm = next(l for l in open(f"/proc/{cdn.pid}/status") if l.startswith("VmHWM")).split()[1]
    record("rendition_16x4k_peak_rss_mib", [int(hwm) / 1024], "MiB", None, "≤ 256 MiB",
           f"16 concurrent first renditions of a 3840×2160 PNG took {elapsed:.1f} s; VmHWM of a fresh cdn-api")


def stop_all_services():
    for p in list(procs):
        if p.args[0].endswith(("cdn-api", "logs-api")) and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
            procs.remove(p)


def list_token(org_id, folder, after):
    payload = json.dumps({"v": 1, "f": folder, "a": after}, separators=(",", ":")).encode()
    tag = hmac.new(SECRET.encode(), f"list:{org_id}".encode() + b"\0" + payload, hashlib.sha256).digest()
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    return f"{enc(payload)}.{enc(tag)}"


def bench_listing(key, org_id):
    t0 = time.time()
    psql(f"""INSERT INTO objects (org_id, key, size, content_type, etag, metadata, storage_path, updated_at)
             SELECT '{org_id}', 'bulk/' || lpad(i::text, 8, '0') || '.png', 10240 + (hashint4(i) & 65535), 'image/png', md5(i::text),
                    jsonb_build_object('license', 'license:' || (i % 50000)), 'o/none/' || i, now() - i * interval '1 second'
             FROM generate_series(1, {OBJECTS}) i; ANALYZE objects;""")
    load = time.time() - t0
    first = f"http://127.0.0.1:{CDN}/v1/objects?path=bulk&limit=1000"
    token = list_token(org_id, "bulk", f"bulk/{int(OBJECTS * 0.9):08d}.png")
    deep = f"{first}&continuationToken={token}"
    status, res = api("GET", deep.replace(f"http://127.0.0.1:{CDN}", ""), key)
    assert status == 200 and len(res["objects"]) == 1000, status
    a = [wrk(first, "scripts/bench/report.lua", conns=1, threads=1, env={"BENCH_AUTH": key}) for _ in range(RUNS)]
    b = [wrk(deep, "scripts/bench/report.lua", conns=1, threads=1, env={"BENCH_AUTH": key}) for _ in range(RUNS)]
    record("list_first_page_p95_ms", [r["p95_us"] / 1000 for r in a], "ms", None, "≤ 20 ms", f"limit=1000 over {OBJECTS:,} objects (loaded in {load:.0f} s)")
    record("list_deep_page_p95_ms", [r["p95_us"] / 1000 for r in b], "ms", None, "≤ 20 ms", "continuation token at 90% of the keyspace")


def bench_object_search(key):
    """`POST /v1/objects/search` over the listing's data set (OBJECTS keys `bulk/00000001.png`…,
    each a second older than the one before, sizes 10–74 KiB, metadata `license:<i mod 50000>`):
    p95 of sequential requests, first pages; the baseline is the listing's first page (limit 100)
    timed the same way."""
    conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=60)
    def timed(method, path, body=None):
        t0 = time.perf_counter()
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        r = conn.getresponse()
        data = json.loads(r.read())
        assert r.status == 200, data
        return (time.perf_counter() - t0) * 1000, data
    reps = 20 if QUICK else 40
    rare = f"{int(OBJECTS * 0.4242):08d}"[1:]  # seven digits: one key holds them
    cases = [
        ("name (rare)", {"path": "bulk", "contains": rare}, 30),
        ("name (common)", {"path": "bulk", "contains": "4242"}, 30),
        ("sorted by date", {"path": "bulk", "sort": "lastModified"}, 20),
        ("sorted by size", {"path": "bulk", "sort": "size"}, 20),
        ("metadata value", {"metadataValues": ["license:4242"], "sort": "lastModified"}, 30),
    ]
    timed("GET", "/v1/objects?path=bulk&limit=100")
    base = [timed("GET", "/v1/objects?path=bulk&limit=100")[0] for _ in range(reps)]
    rows = []
    for name, body, target in cases:
        _, data = timed("POST", "/v1/objects/search", {**body, "limit": 100})  # unmeasured: the first read
        ms = [timed("POST", "/v1/objects/search", {**body, "limit": 100})[0] for _ in range(reps)]
        found = len(data["objects"])
        rows.append({"case": name, "p50": round(pct(ms, 50), 1), "p95": round(pct(ms, 95), 1), "target": target, "found": found})
        results.append({"name": "object_search_" + name.replace(" ", "_").replace("(", "").replace(")", "") + "_p95_ms", "value": round(pct(ms, 95), 1),
                        "unit": "ms", "baseline": round(pct(base, 95), 1), "ratio": round(pct(ms, 95) / max(pct(base, 95), 0.001), 2), "runs": reps,
                        "min": round(min(ms), 1), "max": round(max(ms), 1), "target": f"≤ {target} ms",
                        "note": f"first page (limit 100, {found} found) over {OBJECTS:,} objects; baseline: the listing's first page"})
        log(f"object search {name}: p95 {pct(ms, 95):.1f} ms ({found} found; listing {pct(base, 95):.1f} ms)")
    conn.close()
    tables["object_search"] = rows


def bench_folders(key, org_id):
    """Folder view pages (`delimiter=/`, default limit 100) over the listing's data set: a folder
    with every object directly inside (`bulk`, all of OBJECTS) and one whose objects all sit in
    deep sub-folders (`deep`, a tenth of OBJECTS in 200 sub-folders, three levels down). The
    baseline is the recursive listing's first page of the same folder, same limit."""
    deep_rows = OBJECTS // 10
    t0 = time.time()
    psql(f"""INSERT INTO objects (org_id, key, size, content_type, etag, metadata, storage_path, updated_at)
             SELECT '{org_id}', 'deep/f' || lpad((i % 200)::text, 3, '0') || '/x/y/' || lpad(i::text, 8, '0') || '.png',
                    10240, 'image/png', md5(i::text), '{{}}', 'o/none/deep' || i, now()
             FROM generate_series(1, {deep_rows}) i; ANALYZE objects;""")
    load = time.time() - t0
    base = f"http://127.0.0.1:{CDN}/v1/objects"
    status, res = api("GET", f"/v1/objects?path=deep&delimiter=/", key)
    assert status == 200 and len(res["folders"]) == 100, (status, res)
    status, res = api("GET", f"/v1/objects?path=bulk&delimiter=/", key)
    assert status == 200 and len(res["objects"]) == 100, status
    run = lambda url: [wrk(url, "scripts/bench/report.lua", conns=1, threads=1, env={"BENCH_AUTH": key}) for _ in range(RUNS)]
    for folder, note in (("bulk", f"{OBJECTS:,} objects directly inside"), ("deep", f"{deep_rows:,} objects in 200 sub-folders 3 levels down (loaded in {load:.0f} s)")):
        recursive = run(f"{base}?path={folder}")
        view = run(f"{base}?path={folder}&delimiter=/")
        record(f"folder_page_{folder}_p95_ms", [r["p95_us"] / 1000 for r in view], "ms", [r["p95_us"] / 1000 for r in recursive], "≤ 20 ms",
               f"`delimiter=/`, limit 100: {note}; baseline: the recursive listing's first page of the same folder")


def bench_delete_folder(key, org_id):
    """Deleting a folder of FOLDER_OBJECTS objects (rows and real files) through
    `POST /v1/objects/delete-folder`, called until `done`; baseline: one SQL `DELETE` of as many
    rows. Checks that no byte is left behind."""
    n = OBJECTS // 10
    api_s, sql_s, calls = [], [], []
    for run in range(RUNS):
        folder = f"trash{run}"
        def load(prefix):
            psql(f"""INSERT INTO objects (org_id, key, size, content_type, etag, metadata, storage_path, updated_at)
                     SELECT '{org_id}', '{prefix}/' || lpad(i::text, 8, '0') || '.png', 1, 'image/png', md5(i::text), '{{}}',
                            'o/{prefix}/' || i, now()
                     FROM generate_series(1, {n}) i; ANALYZE objects;""")
        load(folder)
        os.makedirs(f"{WORK}/objects/o/{folder}", exist_ok=True)
        for i in range(1, n + 1):
            with open(f"{WORK}/objects/o/{folder}/{i}", "wb") as f:
                f.write(b"x")
        t0 = time.time()
        count = 0
        while True:
            status, res = api("POST", "/v1/objects/delete-folder", key, {"path": folder})
            assert status == 200, (status, res)
            count += 1
            if res["done"]:
                break
        api_s.append(time.time() - t0)
        calls.append(count)
        left = len(os.listdir(f"{WORK}/objects/o/{folder}"))
        assert left == 0, f"{left} files left under o/{folder}"
        load(f"sql{run}")
        t0 = time.time()
        psql(f"DELETE FROM objects WHERE org_id = '{org_id}' AND key >= 'sql{run}/' AND key < 'sql{run}0'")
        sql_s.append(time.time() - t0)
    record("delete_folder_100k_s" if n == 100_000 else f"delete_folder_{n}_s", api_s, "s", sql_s, "no request times out",
           f"{n:,} objects (rows and 1-byte files) deleted by {statistics.median(calls):.0f} calls of 1000; no file left; "
           "baseline: one SQL DELETE of as many rows (no files)")


def delete_probe(key, folder, n, stop, latencies):
    """Deletes random objects of `folder` (`<folder>/00000001.png`…) one request at a time until
    `stop`, timing each: a delete waits for the row lock of a batch that holds its row."""
    import random
    conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=120)
    while not stop.is_set():
        path = f"{folder}/{random.randint(1, n):08d}.png"
        t0 = time.perf_counter()
        conn.request("DELETE", f"/v1/objects?path={path}", headers={"Authorization": f"Bearer {key}"})
        r = conn.getresponse()
        r.read()
        assert r.status == 200, r.status
        latencies.append((time.perf_counter() - t0) * 1000)
    conn.close()


def bench_lifecycle(key, org_id):
    """A lifecycle rule expiring n = OBJECTS/10 objects (rows and real 1-byte files, last modified
    two days ago) against `POST /v1/objects/delete-folder` of as many, each with a probe deleting
    random objects of the folder meanwhile: the probe's slowest request is how long a batch held
    a row another request wanted. The pass is the API host's own (LIFECYCLE_INTERVAL_SECONDS=1);
    the time is from setting the rule to the last row gone."""
    n = OBJECTS // 10
    def load(folder, age):
        psql(f"""INSERT INTO objects (org_id, key, size, content_type, etag, metadata, storage_path, updated_at)
                 SELECT '{org_id}', '{folder}/' || lpad(i::text, 8, '0') || '.png', 1, 'image/png', md5(i::text), '{{}}',
                        'o/{folder}/' || i, now() - interval '{age}'
                 FROM generate_series(1, {n}) i; ANALYZE objects;""")
        os.makedirs(f"{WORK}/objects/o/{folder}", exist_ok=True)
        for i in range(1, n + 1):
            with open(f"{WORK}/objects/o/{folder}/{i}", "wb") as f:
                f.write(b"x")
    def left(folder):
        return int(psql(f"SELECT count(*) FROM objects WHERE org_id = '{org_id}' AND key >= '{folder}/' AND key < '{folder}0'").strip())
    def probed(folder, work):
        stop, lat = threading.Event(), []
        t = threading.Thread(target=delete_probe, args=(key, folder, n, stop, lat))
        t.start()
        t0 = time.time()
        work()
        took = time.time() - t0
        stop.set()
        t.join()
        assert left(folder) == 0 and not os.listdir(f"{WORK}/objects/o/{folder}"), f"{folder}: something left"
        return took, max(lat), pct(lat, 99), len(lat)
    life, folder_runs = [], []
    for run in range(RUNS):
        load(f"trashp{run}", "0 seconds")
        def folder_delete():
            while True:
                status, res = api("POST", "/v1/objects/delete-folder", key, {"path": f"trashp{run}"})
                assert status == 200, (status, res)
                if res["done"]:
                    return
        folder_runs.append(probed(f"trashp{run}", folder_delete))
        load(f"aged{run}", "2 days")
        def expire():
            status, res = api("PUT", "/v1/lifecycle", key, {"path": f"aged{run}", "days": 1})
            assert status == 200, (status, res)
            while left(f"aged{run}") > 0:
                time.sleep(0.05)
        life.append(probed(f"aged{run}", expire))
        api("DELETE", f"/v1/lifecycle?path=aged{run}", key)
        log(f"lifecycle run {run}: {life[-1][0]:.1f} s, probe max {life[-1][1]:.0f} ms; folder delete {folder_runs[-1][0]:.1f} s, probe max {folder_runs[-1][1]:.0f} ms")
    label = f"{n // 1000}k" if n % 1000 == 0 else str(n)
    record(f"lifecycle_expire_{label}_s", [r[0] for r in life], "s", [r[0] for r in folder_runs], None,
           f"{n:,} expired objects (rows and 1-byte files) deleted by the API host's passes, from setting the rule to the last row gone; "
           "baseline: delete-folder of as many, called until done")
    record(f"lifecycle_probe_max_ms", [r[1] for r in life], "ms", [r[1] for r in folder_runs], "≤ folder delete's",
           f"slowest of {statistics.median([r[3] for r in life]):.0f} deletes of random objects of the folder while it expired (p99 "
           f"{statistics.median([r[2] for r in life]):.1f} ms); baseline: the same probe during the folder delete (p99 "
           f"{statistics.median([r[2] for r in folder_runs]):.1f} ms)")


def bench_presigned(key):
    png = f"{WORK}/files/tiny.png"
    with open(png, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    script = f"{WORK}/presigned.sh"
    with open(script, "w") as f:
        f.write(f"""#!/bin/bash
set -e
u=$(curl -sf -H 'Authorization: Bearer {key}' 'http://127.0.0.1:{CDN}/v1/presigned-url?path=bench/p' | sed -E 's/.*"uploadUrl":"([^"]+)".*/\\1/')
curl -sf -o /dev/null -F file=@{png} "$u"
""")
    base_script = f"{WORK}/healthz.sh"
    with open(base_script, "w") as f:
        f.write(f"#!/bin/bash\ncurl -sf -o /dev/null http://127.0.0.1:{CDN}/healthz\ncurl -sf -o /dev/null http://127.0.0.1:{CDN}/healthz\n")
    os.chmod(script, 0o755)
    os.chmod(base_script, 0o755)
    ours, base = hyperfine([script, base_script], 30)
    record("presigned_roundtrip_p50_ms", [statistics.median(ours) * 1000], "ms", [statistics.median(base) * 1000], None,
           "create URL + upload through it (two curl processes); baseline: two curl /healthz")


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def cdn_pid():
    return next(p.pid for p in procs if p.args[0].endswith("cdn-api") and p.poll() is None)


def bench_tail(server_key, dev_key):
    """Live-tail delivery latency under the ingestion load: during one more ingestion run, a
    second client sends a one-event marker batch every 100 ms and notes when each 202 arrives; a
    tail of the markers notes when each arrives there. Latency = tail arrival - 202 arrival."""
    acked, arrived, stop = {}, {}, threading.Event()
    conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=60)
    conn.request("GET", "/v1/logs/tail?serverId=devsrv&eventType=bench.marker", headers={"Authorization": f"Bearer {dev_key}"})
    res = conn.getresponse()
    assert res.status == 200, res.read()

    def read():
        # until the connection is closed: markers acknowledged last still arrive after the load
        while True:
            try:
                line = res.readline()
            except Exception:  # the connection was closed under it
                return
            if not line:
                return
            if line.startswith(b"data: "):
                arrived.setdefault(json.loads(line[6:])["batch_id"], time.time())

    def mark():
        ingest = http.client.HTTPConnection("127.0.0.1", LOGS, timeout=60)
        n = 0
        while not stop.is_set():
            n += 1
            batch = f"marker-{n:06d}"
            body = json.dumps({"batch_id": batch, "events": [{"level": "info", "event_type": "bench.marker", "message": batch}]})
            ingest.request("POST", "/v1/logs", body=body, headers={"Authorization": f"Bearer {server_key}", "Content-Type": "application/json"})
            r = ingest.getresponse()
            r.read()
            if r.status == 202:
                acked[batch] = time.time()
            time.sleep(0.1)
    threads = [threading.Thread(target=read, daemon=True), threading.Thread(target=mark, daemon=True)]
    for t in threads:
        t.start()
    run = wrk(f"http://127.0.0.1:{LOGS}/v1/logs", "scripts/bench/ingest.lua", conns=16, env={"BENCH_KEY": server_key, "BENCH_RUN": "tail"})
    stop.set()
    threads[1].join()
    deadline = time.time() + 10
    while not set(acked) <= set(arrived) and time.time() < deadline:
        time.sleep(0.1)
    conn.close()
    missing = set(acked) - set(arrived)
    assert not missing, f"the tail never delivered {len(missing)} of {len(acked)} acknowledged markers"
    got = [(arrived[b] - acked[b]) * 1000 for b in acked]
    eps = run["requests"] * 500 / (run["duration_us"] / 1e6)
    for p, target in ((50, None), (99, "≤ 1000 ms")):
        results.append({"name": f"tail_delivery_p{p}_ms", "value": round(pct(got, p), 1), "unit": "ms", "baseline": None, "ratio": None,
                        "runs": len(got), "min": round(min(got), 1), "max": round(max(got), 1), "target": target,
                        "note": f"{len(got)} marker batches, one per 100 ms, during a {DURATION} s ingestion run at {eps:,.0f} events/s (16 connections); "
                                "from the marker's 202 to its arrival at a tail client (another API process than the ingestion one); LOGS_TAIL_POLL_MS default"})
    log(f"tail delivery: p50 {pct(got, 50):.0f} ms, p99 {pct(got, 99):.0f} ms over {len(got)} markers at {eps:,.0f} events/s")


# The rules of a community that alerts on what matters (issue 41): selective every-match rules
# (on event types the bench's mix does not send, or conditions it never meets) and threshold
# rules on its frequent types, counted per resource or player in every commit.
ALERT_SEARCHES = (
    [{"eventType": t} for t in ("anticheat.*", "admin.ban", "resource.error", "server.crash", "txadmin.*",
                                  "phone.*", "garage.*", "police.*", "ems.*", "housing.*")]
    + [{"eventType": "economy.transfer", "dataWhere": [{"path": "amount", "op": ">", "value": 1_000_000 + i}]} for i in range(10)]
    + [{"message": w} for w in ("duped", "exploit", "injector", "lua executor", "money drop", "godmode", "noclip",
                                 "speedhack", "teleport", "spawned vehicle")]
    + [{"eventType": "admin.action", "resource": f"other-{i}"} for i in range(10)]
)
THRESHOLD_SEARCHES = [{"eventType": t} for t in ("economy.transfer", "player.death", "admin.action", "chat.message", "player.join")]


def alert_receiver():
    """A webhook receiver on loopback that notes when each probe event arrived."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    arrived = {}

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            now = time.time()
            for e in json.loads(body).get("events", []):
                arrived.setdefault(e["message"], now)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, arrived


def bench_alerts(server_key, dev_key):
    """Ingestion with 50 active rules against none (paired runs alternating which goes first), and
    the time from a probe batch's 202 to its webhook arriving while ingestion runs at full rate."""
    server, arrived = alert_receiver()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    st, d = api("POST", "/v1/logs/destinations", dev_key, {"name": "bench hook", "kind": "webhook", "url": url})
    assert st == 201, d
    dst = d["destination"]["id"]
    searches = []
    for i, f in enumerate(ALERT_SEARCHES + THRESHOLD_SEARCHES + [{"eventType": "bench.probe"}]):
        st, ss = api("POST", "/v1/logs/saved-searches", dev_key, {"name": f"alert {i}", "search": f})
        assert st == 201, ss
        searches.append(ss["savedSearch"]["id"])

    def make_rules():
        ids = []
        for i, ss in enumerate(searches):
            body = {"name": f"rule {i}", "savedSearchId": ss, "kind": "every", "destinationIds": [dst]}
            if len(ALERT_SEARCHES) <= i < len(ALERT_SEARCHES) + len(THRESHOLD_SEARCHES):
                body.update(kind="threshold", threshold=100_000, windowMinutes=5,
                            groupBy="resource" if i % 2 else "player")
            st, r = api("POST", "/v1/logs/alert-rules", dev_key, body)
            assert st == 201, r
            ids.append(r["alertRule"]["id"])
        return ids

    def drop_rules(ids):
        for r in ids:
            st, _ = api("DELETE", f"/v1/logs/alert-rules/{r}", dev_key)
            assert st == 200

    latencies, stop = [], threading.Event()

    def probe():
        n = 0
        while not stop.is_set():
            n += 1
            msg = f"probe {time.time_ns()} {n}"
            ev = {"level": "warn", "event_type": "bench.probe", "message": msg, "occurred_at": iso(time.time())}
            st, _ = api("POST", "/v1/logs", server_key, {"batch_id": f"probe-{time.time_ns()}", "events": [ev]}, host=LOGS)
            if st == 202:
                latencies.append((msg, time.time()))
            stop.wait(0.25)

    eps = {"none": [], "50 rules": []}
    pairs = RUNS + RUNS % 2
    rules = []
    # a warm-up run, not counted: the first run on a fresh partition takes batches faster than
    # any later one (issue 42), which would favour whichever side ran first
    warm = wrk(f"http://127.0.0.1:{LOGS}/v1/logs", "scripts/bench/ingest.lua", conns=16,
               env={"BENCH_KEY": server_key, "BENCH_RUN": "alerts-warm"})
    log(f"alerts warm-up (not counted): {warm['requests'] * 500 / (warm['duration_us'] / 1e6):,.0f} events/s")
    for i in range(pairs * 2):
        which = "none" if (i % 2 == 0) == (i // 2 % 2 == 0) else "50 rules"
        if which == "50 rules" and not rules:
            rules = make_rules()
        elif which == "none" and rules:
            drop_rules(rules)
            rules = []
        prober = threading.Thread(target=probe) if rules else None
        if prober:
            stop.clear()
            prober.start()
        r = wrk(f"http://127.0.0.1:{LOGS}/v1/logs", "scripts/bench/ingest.lua", conns=16,
                env={"BENCH_KEY": server_key, "BENCH_RUN": f"alerts{i}"})
        if prober:
            stop.set()
            prober.join()
        assert r["non2xx"] == 0 and r["errors"] == 0, r
        eps[which].append(r["requests"] * 500 / (r["duration_us"] / 1e6))
        log(f"alerts run {i + 1}: {which} {eps[which][-1]:,.0f} events/s")
    # every probe's webhook, waited for up to 30 s after the last run
    deadline = time.time() + 30
    while time.time() < deadline and any(m not in arrived for m, _ in latencies):
        time.sleep(0.1)
    lost = sum(1 for m, _ in latencies if m not in arrived)
    waits = [(arrived[m] - t) * 1000 for m, t in latencies if m in arrived]
    if rules:
        drop_rules(rules)
    server.shutdown()
    record("ingest_events_per_s_with_50_alert_rules", eps["50 rules"], "events/s", eps["none"], "≥ 0.95×",
           f"{pairs} pairs of {DURATION} s runs of the ingest mix after a warm-up run, in turn without rules first and with first; 50 rules: "
           f"{len(ALERT_SEARCHES) + 1} every-match (selective; one on the probes) and {len(THRESHOLD_SEARCHES)} threshold rules on frequent types grouped by resource or player")
    record("alert_202_to_webhook_p95_ms", [pct(waits, 95)] if waits else [float("nan")], "ms", None, "≤ 2,000 ms",
           f"{len(waits)} probe batches (one event each, every 250 ms) during the runs with rules at full ingestion rate; from the probe's 202 to its "
           f"webhook arriving at a local receiver; p50 {pct(waits, 50) if waits else float('nan'):.0f} ms, max {max(waits) if waits else float('nan'):.0f} ms; {lost} not arrived within 30 s")


def bench_ingest_ab(server_key):
    """Paired A/B of ingestion with another build's logs-api (`BENCH_BASELINE_BIN`, a directory
    with a release logs-api, e.g. the commit before a write-path change), alternating runs
    against the same database: the cost of the change, measured in one run."""
    base_dir = os.environ.get("BENCH_BASELINE_BIN")
    if not base_dir:
        log("ingest-ab: BENCH_BASELINE_BIN not set; skipped")
        return
    env = {"DATABASE_URL": DB, "LOGS_API_ADDR": f"127.0.0.1:{LOGS}", "RATE_LIMIT_PER_SECOND": "1000000",
           "RATE_LIMIT_BURST": "1000000", "RUST_LOG": "warn", "DATABASE_MAX_CONNECTIONS": "16"}
    # indexes the baseline's schema did not have (`BENCH_BASELINE_DROP_INDEXES`, names of
    # indexes of any table; for log_events, the partitioned table's own): dropped for the
    # baseline's runs and made again, outside the timing, for this build's, so the A/B pays a
    # new index's write cost too
    dropped = [x for x in os.environ.get("BENCH_BASELINE_DROP_INDEXES", "").split(",") if x]
    defs = {x: buildable(psql(f"SELECT indexdef FROM pg_indexes WHERE indexname = '{x}'")) for x in dropped}
    assert all(defs.values()), f"BENCH_BASELINE_DROP_INDEXES names an index the schema does not have: {defs}"
    def schema_of(which):
        for name, d in defs.items():
            present = psql(f"SELECT count(*) FROM pg_indexes WHERE indexname = '{name}'") == "1"
            if which == "baseline" and present:
                psql(f"DROP INDEX {name}")
            elif which == "this build" and not present:
                psql(d)
    eps = {"baseline": [], "this build": []}
    # an even number of pairs, in turn baseline first and this build first, so that drift over
    # the runs falls on both builds alike (with the baseline always first, two runs of the same
    # builds in swapped roles each favoured the build that ran first by ~20%)
    pairs = RUNS + RUNS % 2
    for i in range(pairs * 2):
        which = "baseline" if (i % 2 == 0) == (i // 2 % 2 == 0) else "this build"
        for p in list(procs):
            if p.args[0].endswith("logs-api") and p.poll() is None:
                p.terminate()
                p.wait(timeout=15)
                procs.remove(p)
        schema_of(which)
        start([os.path.join(base_dir if which == "baseline" else BIN, "logs-api")], env, "logs-api-ab")
        wait_http(f"http://127.0.0.1:{LOGS}/healthz")
        r = wrk(f"http://127.0.0.1:{LOGS}/v1/logs", "scripts/bench/ingest.lua", conns=16, env={"BENCH_KEY": server_key, "BENCH_RUN": f"ab{i}"})
        assert r["non2xx"] == 0 and r["errors"] == 0, r
        eps[which].append(r["requests"] * 500 / (r["duration_us"] / 1e6))
        log(f"ingest-ab run {i + 1}: {which} {eps[which][-1]:,.0f} events/s")
    schema_of("this build")
    record("ingest_events_per_s_vs_previous_build", eps["this build"], "events/s", eps["baseline"], "≥ 0.95× (explorer work ≤ 5% of ingestion)",
           f"{pairs} pairs of {DURATION} s runs, in turn baseline first and this build first, same database; baseline: logs-api of {os.environ.get('BENCH_BASELINE_NAME', base_dir)}"
           + (f", without the index{'es' if len(dropped) > 1 else ''} {', '.join(dropped)} (dropped for its runs, made again for this build's)" if dropped else ""))


def bench_explorer_ab(dev_key):
    """Paired A/B of the explorer's reads with another build's cdn-api (`BENCH_BASELINE_BIN`, as
    for ingest-ab) over the query set: query, counts, facets and patterns of one server, and the
    players and player reads that fan out over every server. Each run restarts cdn-api with one
    build and times the same sequential requests (one unmeasured first request per case)."""
    base_dir = os.environ.get("BENCH_BASELINE_BIN")
    if not base_dir:
        log("explorer-ab: BENCH_BASELINE_BIN not set; skipped")
        return
    now = time.time()
    day = {"serverId": "devsrv", "from": iso(now - 86400), "to": iso(now + 60)}
    month = {"from": iso(now - 30 * 86400), "to": iso(now + 60)}
    cases = [
        ("/v1/logs/query", {**day, "eventType": "economy.transfer"}),
        ("/v1/logs/query", {**day, "message": "joined"}),
        ("/v1/logs/counts", day),
        ("/v1/logs/facets", day),
        ("/v1/logs/patterns", day),
        ("/v1/logs/players", {"name": "player1234", **month}),
        ("/v1/logs/player", {"player": "license:" + hashlib.md5(b"1234").hexdigest(), "limit": 50, **month}),
    ]
    reps = 5 if QUICK else 10
    rps = {"baseline": [], "this build": []}
    pairs = RUNS + RUNS % 2
    for i in range(pairs * 2):
        which = "baseline" if (i % 2 == 0) == (i // 2 % 2 == 0) else "this build"
        for p in list(procs):
            if p.args[0].endswith("cdn-api") and p.poll() is None:
                p.terminate()
                p.wait(timeout=15)
                procs.remove(p)
        start([os.path.join(base_dir if which == "baseline" else BIN, "cdn-api")], service_env(), "cdn-api-ab")
        wait_http(f"http://127.0.0.1:{CDN}/healthz")
        conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=120)
        def call(path, body):
            conn.request("POST", path, body=json.dumps(body), headers={"Authorization": f"Bearer {dev_key}", "Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            assert r.status == 200, (path, r.status)
        for path, body in cases:
            call(path, body)  # unmeasured: the first read of what is not cached
        t0 = time.perf_counter()
        for _ in range(reps):
            for path, body in cases:
                call(path, body)
        elapsed = time.perf_counter() - t0
        conn.close()
        rps[which].append(reps * len(cases) / elapsed)
        log(f"explorer-ab run {i + 1}: {which} {rps[which][-1]:.1f} reads/s")
    # this build's cdn-api again for what follows
    for p in list(procs):
        if p.args[0].endswith("cdn-api") and p.poll() is None:
            p.terminate()
            p.wait(timeout=15)
            procs.remove(p)
    start([f"{BIN}/cdn-api"], service_env(), "cdn-api")
    wait_http(f"http://127.0.0.1:{CDN}/healthz")
    record("explorer_reads_per_s_vs_previous_build", rps["this build"], "reads/s", rps["baseline"], "≥ 0.95×",
           f"{pairs} pairs of runs, in turn baseline first and this build first; each run {reps} rounds of "
           f"{len(cases)} sequential reads (query ×2, counts, facets, patterns of one server; players and player over every server); "
           f"baseline: cdn-api of {os.environ.get('BENCH_BASELINE_NAME', base_dir)}")


def cpu_seconds():
    """CPU seconds used so far by the benchmark's PostgreSQL cluster (every process of it, plus
    its exited children through the postmaster's cutime/cstime: COPY sessions' backends end
    before they are read) and by logs-api, from /proc."""
    postmaster = next(p.pid for p in procs if p.args[0].endswith("/postgres"))
    pg = api = 0
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(f"{d}/stat") as f:
                st = f.read()
        except OSError:
            continue  # exited since the listing
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        own = int(fields[11]) + int(fields[12])
        if comm == "postgres":
            pg += own + (int(fields[13]) + int(fields[14]) if int(d[len("/proc/"):]) == postmaster else 0)
        elif comm == "logs-api":
            api += own
    hz = os.sysconf("SC_CLK_TCK")
    return pg / hz, api / hz


def export_copy_rows():
    """Writes (up to COPY_ROWS of) the ingested events, and their share of runs, as CSV for the
    COPY baselines: whole, and in two halves for two sessions. Returns the number of events."""
    cols, csv, runs_csv = EVENT_COLUMNS, f"{WORK}/events.csv", f"{WORK}/runs.csv"
    psql(f"\\copy (SELECT {cols} FROM log_events LIMIT {COPY_ROWS}) TO '{csv}' CSV")
    rows = int(psql(f"SELECT count(*) FROM (SELECT 1 FROM log_events LIMIT {COPY_ROWS}) x"))
    # ingestion also writes the runs of words of its batches (log_runs, one per 50 events or
    # fewer): the COPYs carry the same share of them, so that they do the service's writes
    psql(f"\\copy (SELECT {RUN_COLUMNS} FROM log_runs LIMIT (SELECT count(*) FROM log_runs) * {rows} "
         f"/ greatest((SELECT count(*) FROM log_events), 1)) TO '{runs_csv}' CSV")
    for path, parts in ((csv, [f"{WORK}/events-{i}.csv" for i in range(2)]), (runs_csv, [f"{WORK}/runs-{i}.csv" for i in range(2)])):
        with open(path) as f:
            lines = f.readlines()
        for h, part in enumerate(parts):
            with open(part, "w") as f:
                f.writelines(lines[h * len(lines) // 2:(h + 1) * len(lines) // 2])
    return rows


def bench_ingest(server_key):
    """HTTP ingestion against COPY of the same rows, in one, then two sessions. The three are
    measured in rounds (HTTP, one-session COPY, two-session COPY), so that each round's figures
    share the host's noise of that minute and the same table size; the rows COPYed are (up to
    COPY_ROWS of) the ones the first HTTP run ingested."""
    cols = EVENT_COLUMNS
    csv, runs_csv = f"{WORK}/events.csv", f"{WORK}/runs.csv"
    halves = [f"{WORK}/events-{i}.csv" for i in range(2)]
    run_halves = [f"{WORK}/runs-{i}.csv" for i in range(2)]
    runs, copy, copy_both = [], [], []
    # CPU per event of Postgres and logs-api during each HTTP run, and of Postgres per row during
    # each two-session COPY: the two parts of the gap between them
    cpu = {"pg_http": [], "api_http": [], "pg_cores_http": [], "pg_copy": [], "pg_cores_copy": []}
    rows = 0
    rounds = []  # per round: the machine's CPU split and autovacuum's work during HTTP and two-session COPY
    for i in range(RUNS):
        # CPU is read over the middle 60% of the run (steady state: batches in flight at both ends
        # balance out), against the events of the batches stamped in that window
        samples, start = [], time.time()
        def sample():
            for at in (0.2, 0.8):
                time.sleep(max(0.0, start + at * DURATION - time.time()))
                samples.append((time.time(), *cpu_seconds()))
        sampler = threading.Thread(target=sample)
        sampler.start()
        with Watch() as http_watch:
            runs.append(wrk(f"http://127.0.0.1:{LOGS}/v1/logs", "scripts/bench/ingest.lua", conns=16, env={"BENCH_KEY": server_key, "BENCH_RUN": f"r{i}"}))
        sampler.join()
        assert runs[-1]["non2xx"] == 0 and runs[-1]["errors"] == 0, runs[-1]
        (ta, pg0, api0), (tb, pg1, api1) = samples
        events = int(psql(f"SELECT coalesce(sum(accepted_events), 0) FROM log_batches WHERE ingested_at >= to_timestamp({ta}) AND ingested_at < to_timestamp({tb})"))
        cpu["pg_http"].append((pg1 - pg0) / events * 1e6)
        cpu["api_http"].append((api1 - api0) / events * 1e6)
        cpu["pg_cores_http"].append((pg1 - pg0) / (tb - ta))
        if i == 0:
            rows = export_copy_rows()
        # the watches' own queries start and end outside the timed copies
        with Watch() as copy1_watch:
            t0 = time.time()
            psql(f"\\copy log_events ({cols}) FROM '{csv}' CSV\n\\copy log_runs ({RUN_COLUMNS}) FROM '{runs_csv}' CSV")
            copy.append(rows / (time.time() - t0))
        # the same rows in two concurrent COPY sessions, one per core: all Postgres can take on
        # this machine with the shipped indexes, with no HTTP service running beside it
        with Watch() as copy_watch:
            (pg0, _), t0 = cpu_seconds(), time.time()
            psql_parallel([f"\\copy log_events ({cols}) FROM '{path}' CSV\n\\copy log_runs ({RUN_COLUMNS}) FROM '{runs}' CSV"
                           for path, runs in zip(halves, run_halves)])
            (pg1, _), secs = cpu_seconds(), time.time() - t0
        copy_both.append(rows / secs)
        cpu["pg_copy"].append((pg1 - pg0) / rows * 1e6)
        cpu["pg_cores_copy"].append((pg1 - pg0) / secs)
        http_events = runs[-1]["requests"] * 500
        for watch, n in ((http_watch, http_events), (copy1_watch, rows), (copy_watch, rows)):
            watch.result["wal"]["bytes_per_event"] = round(watch.result["wal"]["bytes"] / n)
            watch.result["wal"]["full_page_images_per_1000_events"] = round(watch.result["wal"]["full_page_images"] * 1000 / n, 1)
        rounds.append({"http": http_watch.result, "copy_1_session": copy1_watch.result, "copy_2_sessions": copy_watch.result})
        log(f"ingest round {i + 1}: HTTP {runs[-1]['requests'] * 500 / (runs[-1]['duration_us'] / 1e6):,.0f} events/s, "
            f"COPY {copy[-1]:,.0f} rows/s, two sessions {copy_both[-1]:,.0f} rows/s; during HTTP {http_watch.result}, "
            f"during two-session COPY {copy_watch.result}")
    tables["ingest_rounds"] = rounds
    body = runs[0]["body_bytes"]
    eps = [r["requests"] * 500 / (r["duration_us"] / 1e6) for r in runs]
    record("ingest_events_per_s", eps, "events/s", copy, "≥ 56,000 and ≥ 0.75× COPY", "500-event batches over HTTP, 16 connections; baseline: COPY of the same rows into log_events, one run after each HTTP run")
    per_round = ", ".join(f"{e / c:.2f}" for e, c in zip(eps, copy_both))
    record("ingest_events_per_s_vs_copy_2_sessions", eps, "events/s", copy_both, "≥ 0.9× in every round",
           "the same HTTP runs; baseline: the same rows COPYed by two concurrent sessions (one per core) in the same rounds, the ceiling for this index set "
           f"on this machine; per round {per_round}")
    record("ingest_postgres_cpu_us_per_event", cpu["pg_http"], "µs", cpu["pg_copy"], None,
           "CPU of every PostgreSQL process per event over the middle 60% of each HTTP run (/proc), against the events of the batches stamped in that window; "
           "baseline: per row during the two-session COPY runs")
    record("ingest_logs_api_cpu_us_per_event", cpu["api_http"], "µs", None, None, "CPU of logs-api per event over the same windows")
    record("ingest_postgres_cores", cpu["pg_cores_http"], "cores", cpu["pg_cores_copy"], None,
           "cores PostgreSQL used over the same windows (of the machine's 2, shared with logs-api and wrk); baseline: during the two-session COPY runs")
    record("ingest_mb_per_s", [r["requests"] * body / (r["duration_us"] / 1e6) / 1e6 for r in runs], "MB/s")
    record("ingest_batch_p50_ms", [r["p50_us"] / 1000 for r in runs], "ms")
    record("ingest_batch_p99_ms", [r["p99_us"] / 1000 for r in runs], "ms")
    # the ingest cost of each index, measured with COPY into a scratch copy of the table
    cost = []
    def copy_into_scratch(extra_index):
        psql("DROP TABLE IF EXISTS bench_scratch; CREATE TABLE bench_scratch (LIKE log_events INCLUDING DEFAULTS)")
        if extra_index:
            psql(extra_index)
        t0 = time.time()
        psql(f"\\copy bench_scratch ({cols}) FROM '{csv}' CSV")
        return rows / (time.time() - t0)
    bare = statistics.median([copy_into_scratch(None) for _ in range(2)])
    for name, d in shipped_indexes("bench_scratch"):
        with_ix = statistics.median([copy_into_scratch(d) for _ in range(2)])
        cost.append({"index": name, "rows_per_s": round(with_ix), "slowdown_pct": round((bare / with_ix - 1) * 100, 1)})
    psql("DROP TABLE IF EXISTS bench_scratch")
    tables["index_cost"] = {"bare_rows_per_s": round(bare), "rows": rows, "indexes": cost}


# The soak: SOAK_SECONDS of HTTP ingestion, then as long of two-session COPY, each from empty log
# tables, reported per SOAK_INTERVAL ("minute"; shorter in quick mode)
SOAK_SECONDS = int(os.environ.get("BENCH_SOAK_SECONDS", 60 if QUICK else 600))
SOAK_INTERVAL = int(os.environ.get("BENCH_SOAK_INTERVAL", 15 if QUICK else 60))
# migration 23's setting of the day partitions (stow_db::logs::partitions::PARTITION_SETTINGS)
PARTITION_SETTINGS = "autovacuum_vacuum_insert_threshold = -1"
# every table an ingested batch writes (log_events: its partitions summed)
SOAK_TABLES = ("log_events", "log_batches", "log_runs", "log_counts_hourly", "log_level_counts_15m", "usage_counters")


MACHINE_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def machine_now():
    """The whole machine's CPU ticks so far (MACHINE_FIELDS, /proc/stat) and its free and dirty
    memory: whether the kernel (writeback, reclaim) or other tenants take a growing share."""
    ticks = [int(x) for x in open("/proc/stat").readline().split()[1:1 + len(MACHINE_FIELDS)]]
    mem = {l.split(":")[0]: int(l.split()[1]) for l in open("/proc/meminfo")}
    return {"ticks": ticks, "free_mib": mem["MemFree"] // 1024, "dirty_mib": mem["Dirty"] // 1024}


def machine_split(a, b):
    """Each field's share (%) of all the machine's CPU time between two machine_now() readings."""
    ticks = [y - x for x, y in zip(a["ticks"], b["ticks"])]
    return {k: round(100 * v / max(sum(ticks), 1), 1) for k, v in zip(MACHINE_FIELDS, ticks)}


def tally(samples, kind):
    """How many of soak_activity's samples of `kind` each value has (a sample ≈ one second)."""
    counts = {}
    for _, k, what in samples:
        if k == kind:
            counts[what] = counts.get(what, 0) + 1
    return counts


def soak_snapshot():
    """What Postgres says of the batch's tables, its WAL position and the events written so far
    (the id sequence: HTTP and COPY both draw from it), with the CPU read from /proc."""
    tables = ", ".join(f"'{t}'" for t in SOAK_TABLES)
    out = psql("SELECT CASE WHEN relname LIKE 'log_events_%' THEN 'log_events' ELSE relname END AS t, sum(n_dead_tup), sum(n_live_tup), "
               "sum(n_tup_upd), sum(n_tup_hot_upd), sum(autovacuum_count), sum(autoanalyze_count), sum(pg_table_size(relid)), sum(pg_indexes_size(relid)) "
               f"FROM pg_stat_user_tables WHERE relname LIKE 'log_events_%' OR relname IN ({tables}) GROUP BY 1;\n"
               "SELECT pg_current_wal_lsn() - '0/0';\nSELECT coalesce(pg_sequence_last_value('log_events_id_seq'), 0)")
    lines = out.splitlines()
    per = {}
    for line in lines[:-2]:
        t, *v = line.split("|")
        per[t] = dict(zip(("dead", "live", "upd", "hot", "autovacuums", "autoanalyzes", "heap_bytes", "index_bytes"), (int(x) for x in v)))
    pg, api = cpu_seconds()
    return {"at": time.time(), "tables": per, "wal": int(lines[-2]), "events": int(lines[-1]), "pg_cpu": pg, "api_cpu": api,
            "machine": machine_now()}


def soak_activity(stop, seen):
    """Once a second until `stop`: what each active Postgres backend waits on, and which table each
    autovacuum worker is on (one sample = about one second of it)."""
    while not stop.wait(1.0):
        try:
            out = psql("SELECT backend_type, coalesce(wait_event_type || ':' || wait_event, 'CPU'), left(translate(query, E'\\n\\r|', '   '), 120) FROM pg_stat_activity "
                       "WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type IN ('client backend', 'autovacuum worker')")
        except subprocess.CalledProcessError:
            continue
        now = time.time()
        for line in out.splitlines():
            kind, wait, query = line.split("|", 2)
            if kind == "autovacuum worker":
                # "autovacuum: VACUUM [ANALYZE] public.t" or "autovacuum: ANALYZE public.t": a
                # vacuum counts under the table's name, an analyze alone under "t (analyze)"
                table = query.split(" public.")[-1].split(" ")[0]
                table = "log_events" if table.startswith("log_events_") else table  # its partitions, summed
                seen.append((now, "autovacuum", table if "VACUUM" in query else f"{table} (analyze)"))
            else:
                seen.append((now, "wait", wait))


class Watch:
    """While a block runs: the machine's CPU split (/proc/stat), what autovacuum works on and
    what active backends wait on (sampled each second, as in the soak), and the WAL written, for
    the ingestion rounds' diagnostics."""

    def __enter__(self):
        self.seen, self.stop = [], threading.Event()
        self.thread = threading.Thread(target=soak_activity, args=(self.stop, self.seen))
        self.thread.start()
        self.machine = machine_now()
        self.buffers = self.written()
        self.wal = self.wal_so_far()
        return self

    @staticmethod
    def wal_so_far():
        """`pg_stat_wal`'s records, full-page images and bytes so far, and the checkpoints
        started: a phase that runs just after a checkpoint has begun logs a whole page the first
        time it changes each page, whichever phase that is."""
        return [int(x) for x in psql("SELECT wal_records, wal_fpi, wal_bytes, (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter) FROM pg_stat_wal").split("|")]

    @staticmethod
    def written():
        """`pg_stat_bgwriter`'s counters so far: buffers written by the checkpointer and the
        background writer, `buffers_backend` and buffers allocated. PostgreSQL 15 counts in
        `buffers_backend` every block a backend hands the checkpointer to sync (relation
        extensions included), and in the rounds these counters stayed 0 until the first
        checkpoint: they do not show evictions, nor when the writes happened."""
        return [int(x) for x in psql("SELECT buffers_checkpoint, buffers_clean, buffers_backend, buffers_alloc FROM pg_stat_bgwriter").split("|")]

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        end = machine_now()
        split = machine_split(self.machine, end)
        buffers = dict(zip(("checkpoint", "bgwriter", "backends", "allocated"), (b - a for a, b in zip(self.buffers, self.written()))))
        wal = dict(zip(("records", "full_page_images", "bytes", "checkpoints"), (b - a for a, b in zip(self.wal, self.wal_so_far()))))
        self.result = {"idle_pct": split["idle"], "system_pct": split["system"], "free_mib": end["free_mib"],
                       "autovacuum_s": tally(self.seen, "autovacuum"), "waits_s": tally(self.seen, "wait"),
                       "buffers_written": buffers, "wal": wal}
        return False


def soak_minutes(snaps, seen):
    """One row per interval between consecutive snapshots."""
    rows = []
    for a, b in zip(snaps, snaps[1:]):
        secs = b["at"] - a["at"]
        events = b["events"] - a["events"]
        tables = {}
        for t in SOAK_TABLES:
            x, y = a["tables"].get(t), b["tables"].get(t)
            if not x or not y:
                continue
            upd = y["upd"] - x["upd"]
            tables[t] = {"dead": y["dead"], "updates": upd, "hot_pct": round(100 * (y["hot"] - x["hot"]) / upd, 1) if upd else None,
                         "autovacuums": y["autovacuums"] - x["autovacuums"], "autoanalyzes": y["autoanalyzes"] - x["autoanalyzes"],
                         "mib": round((y["heap_bytes"] + y["index_bytes"]) / 2**20, 1)}
        inside = [s for s in seen if a["at"] <= s[0] < b["at"]]
        waits = tally(inside, "wait")
        rows.append({"machine_pct": machine_split(a["machine"], b["machine"]), "free_mib": b["machine"]["free_mib"],
                     "dirty_mib": b["machine"]["dirty_mib"], "events_per_s": round(events / secs), "pg_cpu_us_per_event": round((b["pg_cpu"] - a["pg_cpu"]) / max(events, 1) * 1e6, 1),
                     "pg_cores": round((b["pg_cpu"] - a["pg_cpu"]) / secs, 2), "api_cpu_us_per_event": round((b["api_cpu"] - a["api_cpu"]) / max(events, 1) * 1e6, 1),
                     "wal_bytes_per_event": round((b["wal"] - a["wal"]) / max(events, 1)), "tables": tables,
                     "autovacuum_s": tally(inside, "autovacuum"), "waits": dict(sorted(waits.items(), key=lambda kv: -kv[1])[:4])})
    return rows


def soak_empty_tables():
    """Both halves of the soak start from empty log tables (the rows of the sections before are
    gone; the query section, which needs its own, runs before this one)."""
    psql("TRUNCATE log_events, log_batches, log_runs, log_counts_hourly, log_level_counts_15m, usage_counters; CHECKPOINT; VACUUM ANALYZE")


def soak_run(load):
    """Runs `load(deadline)` for SOAK_SECONDS while snapshots are taken every SOAK_INTERVAL."""
    soak_empty_tables()
    seen, stop = [], threading.Event()
    watcher = threading.Thread(target=soak_activity, args=(stop, seen))
    watcher.start()
    snaps, start = [soak_snapshot()], time.time()
    worker = threading.Thread(target=load, args=(start + SOAK_SECONDS,))
    worker.start()
    for k in range(1, SOAK_SECONDS // SOAK_INTERVAL + 1):
        time.sleep(max(0.0, start + k * SOAK_INTERVAL - time.time()))
        snaps.append(soak_snapshot())
    stop.set()
    worker.join()
    watcher.join()
    return soak_minutes(snaps, seen)


def bench_soak(server_key):
    """Ten minutes of HTTP ingestion at full rate (16 connections, the ingestion rounds' batches),
    then ten minutes of two-session COPY of the same kind of rows, each from empty tables: the
    rate per minute, Postgres CPU per event, WAL per event, and per table the dead tuples, the
    share of HOT updates and the autovacuum activity."""
    halves = [f"{WORK}/events-{i}.csv" for i in range(2)]
    run_halves = [f"{WORK}/runs-{i}.csv" for i in range(2)]

    def http(deadline):
        r = wrk(f"http://127.0.0.1:{LOGS}/v1/logs", "scripts/bench/ingest.lua", conns=16, duration=round(deadline - time.time()),
                env={"BENCH_KEY": server_key, "BENCH_RUN": "soak"})
        assert r["non2xx"] == 0 and r["errors"] == 0, r

    def copy(deadline):
        while time.time() < deadline:
            psql_parallel([f"\\copy log_events ({EVENT_COLUMNS}) FROM '{path}' CSV\n\\copy log_runs ({RUN_COLUMNS}) FROM '{runs}' CSV"
                           for path, runs in zip(halves, run_halves)])

    pairs = int(os.environ.get("BENCH_SOAK_AB", "0"))
    if pairs:
        # the cause, measured: HTTP soaks with the shipped partition settings against soaks with
        # autovacuum's insert-triggered vacuums allowed again (as before migration 23), in turn
        # first and second; no COPY half
        ab = {"insert vacuums on": [], "shipped": []}
        for i in range(pairs * 2):
            which = "insert vacuums on" if (i % 2 == 0) == (i // 2 % 2 == 0) else "shipped"
            setting = "RESET (autovacuum_vacuum_insert_threshold)" if which != "shipped" else f"SET ({PARTITION_SETTINGS})"
            psql("DO $$ DECLARE p regclass; BEGIN FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'log_events'::regclass "
                 f"LOOP EXECUTE format('ALTER TABLE %s {setting}', p); END LOOP; END $$")
            ab[which].append(soak_run(http))
            log(f"soak A/B {i + 1} ({which}): " + ", ".join(f"{m['events_per_s']:,}" for m in ab[which][-1]) + " events/s per interval")
        tables["soak_ab"] = ab
        for which, runs in ab.items():
            record(f"ingest_soak_ab_{'shipped' if which == 'shipped' else 'insert_vacuums'}_events_per_s", [statistics.median(m["events_per_s"] for m in r) for r in runs],
                   "events/s", None, None, f"median interval rate of {len(runs)} HTTP soaks of {SOAK_SECONDS} s ({which})")
        return
    soak = {"seconds": SOAK_SECONDS, "interval": SOAK_INTERVAL}
    for name, load in (("http", http), ("copy", copy)):
        soak[name] = soak_run(load)
        if name == "http":
            export_copy_rows()  # the COPY half writes rows the HTTP half ingested
        log(f"soak {name}: " + ", ".join(f"{m['events_per_s']:,}" for m in soak[name]) + " events/s per interval")
    tables["soak"] = soak
    first, last = soak["http"][0]["events_per_s"], soak["http"][-1]["events_per_s"]
    per = "minute" if SOAK_INTERVAL == 60 else f"{SOAK_INTERVAL} s"
    record("ingest_soak_last_vs_first_interval", [last], "events/s", [first], "≥ 0.9× the first",
           f"{SOAK_SECONDS // 60 if SOAK_SECONDS >= 60 else SOAK_SECONDS} {'min' if SOAK_SECONDS >= 60 else 's'} of HTTP ingestion from empty tables (16 connections, 500-event batches); "
           f"the last {per}'s rate against the first's (every {per}: section \"Sustained ingestion\")")
    record("ingest_soak_copy_last_vs_first_interval", [soak["copy"][-1]["events_per_s"]], "rows/s", [soak["copy"][0]["events_per_s"]], None,
           f"the same for two-session COPY of the same rows, after the HTTP soak, from empty tables")
    record("ingest_soak_vs_copy_2_sessions", [m["events_per_s"] for m in soak["http"]], "events/s", [m["events_per_s"] for m in soak["copy"]], None,
           f"median per-{per} rate of the HTTP soak against the two-session COPY soak's")


def soak_section(tables):
    """The "Sustained ingestion" section of docs/benchmarks.md (heading first)."""
    s = tables["soak"]
    per = "minute" if s["interval"] == 60 else f"{s['interval']} s"
    lines = ["## Sustained ingestion (soak)", "",
             f"{s['seconds']} s of HTTP ingestion at full rate (16 connections, 500-event batches of the ingestion rounds' mix), then {s['seconds']} s of "
             "two-session `COPY` of the same rows, each from empty log tables. Per " + per + ": the rate (events written, from the id sequence), "
             "Postgres CPU per event and cores, `logs-api` CPU per event, WAL bytes per event, and per table the dead tuples at its end, the share "
             "of updates that were HOT, the autovacuum runs (and seconds an autovacuum worker was seen vacuuming it, sampled each second), and its size "
             "(heap and indexes). Machine: the share of all CPU time the kernel took and the share idle (/proc/stat), and free memory at the end "
             "of the interval. Waits: what active backends were seen waiting on, samples per interval.", ""]
    for name, title in (("http", "HTTP ingestion"), ("copy", "Two-session COPY")):
        lines += [f"**{title}**", "", "| " + per + " | events/s | PG µs/event | PG cores | logs-api µs/event | WAL B/event | machine: kernel % / idle % / free MiB | top waits (samples) |",
                  "|---|---|---|---|---|---|---|---|"]
        for i, m in enumerate(s[name]):
            waits = ", ".join(f"{k} {v}" for k, v in m["waits"].items())
            machine = f"{m['machine_pct']['system']} / {m['machine_pct']['idle']} / {m['free_mib']:,}"
            lines.append(f"| {i + 1} | {m['events_per_s']:,} | {m['pg_cpu_us_per_event']} | {m['pg_cores']} | {m['api_cpu_us_per_event']} | {m['wal_bytes_per_event']:,} | {machine} | {waits} |")
        lines += ["", "| " + per + " | " + " | ".join(f"`{t}` dead / HOT % / autovacuums (s) / MiB" for t in SOAK_TABLES) + " |",
                  "|---" * (len(SOAK_TABLES) + 1) + "|"]
        for i, m in enumerate(s[name]):
            cells = []
            for t in SOAK_TABLES:
                x = m["tables"].get(t)
                if x is None:
                    cells.append("–")
                    continue
                hot = "–" if x["hot_pct"] is None else f"{x['hot_pct']}%"
                cells.append(f"{x['dead']:,} / {hot} / {x['autovacuums']} ({m['autovacuum_s'].get(t, 0)}) / {x['mib']:,}")
            lines.append(f"| {i + 1} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines[:-1]


# The index set of `log_events` as shipped on 2026-11-25 (migrations 000003 and 000005), kept as the
# baseline of the ingest ceiling: a change to the shipped set is measured against it in the same
# rounds. `{t}` is the scratch table.
CEILING_BASELINE = [
    "CREATE INDEX ON {t} (server_id, occurred_at DESC, id DESC)",
    "CREATE INDEX ON {t} (server_id, level, occurred_at DESC, id DESC)",
    "CREATE INDEX ON {t} (server_id, event_type, occurred_at DESC, id DESC)",
    "CREATE INDEX ON {t} (server_id, resource, occurred_at DESC, id DESC) WHERE resource IS NOT NULL",
    "CREATE INDEX ON {t} (server_id, player_id, occurred_at DESC, id DESC) WHERE player_id IS NOT NULL",
    "CREATE INDEX ON {t} (server_id, target_player_id, occurred_at DESC, id DESC) WHERE target_player_id IS NOT NULL",
    "CREATE INDEX ON {t} USING gin (log_identity(server_id, player_identifiers) jsonb_path_ops) WITH (gin_pending_list_limit = 512)",
    "CREATE INDEX ON {t} USING gin (log_identity(server_id, target_player_identifiers) jsonb_path_ops) WITH (gin_pending_list_limit = 512)",
    "CREATE INDEX ON {t} USING gin (message gin_trgm_ops)",
]


def buildable(indexdef):
    """An index definition as `pg_indexes` gives it, made to build the index again: for a
    partitioned table it reads `ON ONLY`, which would index the parent alone and no partition."""
    return indexdef.replace(" ON ONLY ", " ON ")


def shipped_indexes(table, of="log_events"):
    """The shipped indexes of `of`: (name, a statement that builds it, unnamed, on `table`)."""
    out = []
    for line in psql(f"SELECT indexname || '|' || indexdef FROM pg_indexes WHERE tablename = '{of}' ORDER BY indexname").splitlines():
        name, definition = line.split("|", 1)
        definition = buildable(definition).replace(f" ON public.{of}", f" ON {table}")
        out.append((name, definition.replace(f"INDEX {name} ", "INDEX ")))
    return out


def bench_ceiling():
    """The ingest ceiling: the rows bench_ingest COPYed, by two concurrent sessions into an empty
    unpartitioned copy of `log_events` with the shipped index set (and their share of runs into a
    copy of `log_runs` with its indexes: the shipped design writes them), against the same events
    with today's set (CEILING_BASELINE, which had no runs), alternating in rounds. The GIN pending
    lists are merged inside the timing (`gin_clean_pending_list`), so an index set never looks
    cheaper by leaving work behind."""
    cols = EVENT_COLUMNS
    halves = [f"{WORK}/events-{i}.csv" for i in range(2)]
    run_halves = [f"{WORK}/runs-{i}.csv" for i in range(2)]
    sets = {"baseline": [x.format(t="bench_ceiling") for x in CEILING_BASELINE],
            "shipped": [d for _, d in shipped_indexes("bench_ceiling")] + [d for _, d in shipped_indexes("bench_ceiling_runs", "log_runs")]}
    rates = {name: [] for name in sets}
    built = {}  # each set's definitions as Postgres prints them, names left out
    rows = None
    for i in range(RUNS):
        for name, statements in sets.items():
            with_runs = any("bench_ceiling_runs" in x for x in statements)
            psql("DROP TABLE IF EXISTS bench_ceiling, bench_ceiling_runs; CREATE TABLE bench_ceiling (LIKE log_events INCLUDING DEFAULTS);\n"
                 "CREATE TABLE bench_ceiling_runs (LIKE log_runs);\n" + ";\n".join(statements) + ";\nCHECKPOINT")
            built[name] = psql("SELECT regexp_replace(indexdef, '^(CREATE INDEX) \\S+', '\\1') d FROM pg_indexes "
                               "WHERE tablename IN ('bench_ceiling', 'bench_ceiling_runs') ORDER BY d")
            t0 = time.time()
            psql_parallel([f"\\copy bench_ceiling ({cols}) FROM '{path}' CSV"
                           + (f"\n\\copy bench_ceiling_runs ({RUN_COLUMNS}) FROM '{runs}' CSV" if with_runs else "")
                           for path, runs in zip(halves, run_halves)])
            psql("SELECT count(gin_clean_pending_list(i.indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                 "JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid IN ('bench_ceiling'::regclass, 'bench_ceiling_runs'::regclass) AND a.amname = 'gin'")
            secs = time.time() - t0
            rows = rows or int(psql("SELECT count(*) FROM bench_ceiling"))
            rates[name].append(rows / secs)
        log(f"ceiling round {i + 1}: shipped {rates['shipped'][-1]:,.0f} rows/s, today's set {rates['baseline'][-1]:,.0f} rows/s")
    psql("DROP TABLE IF EXISTS bench_ceiling, bench_ceiling_runs")
    same = built["shipped"] == built["baseline"]
    record("ingest_ceiling_rows_per_s", rates["shipped"], "rows/s", rates["baseline"], "≥ 1.5× the 2026-11-25 index set",
           f"{rows:,} ingested rows COPYed by two concurrent sessions into an empty copy of log_events with the shipped index set, with their share of log_runs rows into a copy of it, GIN pending lists "
           f"merged inside the timing; baseline: the same with the 2026-11-25 index set (scripts/bench.py CEILING_BASELINE), alternating in the same rounds"
           + ("; the shipped set is that set" if same else ""))


def bench_query(dev_key, org_id):
    # 100 servers; the first one ('devsrv') gets a fifth of the events
    psql(f"""INSERT INTO servers (id, org_id, cfx_id, logs_active) SELECT 'srv_bench_' || i, '{org_id}', 'bench' || i, true FROM generate_series(1, 99) i;""")
    big = psql("SELECT id FROM servers WHERE cfx_id = 'devsrv'")
    # pg_indexes lists the partitioned table's own indexes here, not the partitions'
    secondary = psql("SELECT string_agg(indexname, ',') FROM pg_indexes WHERE tablename = 'log_events' AND indexname <> 'log_events_server_time'")
    defs = psql("SELECT string_agg(indexdef, ';') FROM pg_indexes WHERE tablename = 'log_events' AND indexname = ANY(string_to_array('" + secondary + "', ','))")
    t0 = time.time()
    runs_index = shipped_indexes("log_runs", "log_runs")
    psql("TRUNCATE log_events, log_counts_hourly, log_level_counts_15m, log_runs; " + "".join(f"DROP INDEX {ix};" for ix in secondary.split(","))
         + "".join(f"DROP INDEX {name};" for name, _ in runs_index))
    # every field is drawn from a hash of i, independent of the server choice (i % 5)
    # two sessions, one per core, each inserting half of the rows (the same rows as one session)
    insert = lambda lo, hi: f"""SET synchronous_commit = off;
      INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, event_id, level, event_type, occurred_at, ingested_at, player_id, target_player_id,
                              player_identifiers, target_player_identifiers, resource, trace_id, environment, message, data)
      SELECT '{org_id}', CASE WHEN i % 5 = 0 THEN '{big}' ELSE 'srv_bench_' || (1 + i % 99) END,
             CASE WHEN i % 5 = 0 THEN 'devsrv' ELSE 'bench' || (1 + i % 99) END, 'load-' || (i / 500), 'evt-' || i,
             (ARRAY['debug','info','info','info','info','warn','warn','error','fatal'])[1 + h % 9],
             (ARRAY['player.join','player.leave','chat.message','economy.transfer','player.death','admin.action','vehicle.spawn','inventory.move','job.change','log','resource.start','anticheat.flag'])[1 + (h / 9) % 12],
             now() - ((h % 100000) / 100000.0) * interval '6 days 23 hours', now(),
             ((h / 108) % 5000)::text, CASE WHEN h % 3 = 0 THEN ((h / 7) % 5000)::text END,
             jsonb_build_object('license', 'license:' || md5(((h / 108) % 5000)::text), 'discord', 'discord:' || ((h / 108) % 5000)),
             CASE WHEN h % 3 = 0 THEN jsonb_build_object('license', 'license:' || md5(((h / 7) % 5000)::text)) END,
             (ARRAY['core','chat','es_extended','baseevents','txAdmin','vehicles','inventory','jobs','phone','housing','garage','bank','police','ems','mechanic','racing','drugs','gangs','weather','hud'])[1 + (h / 13) % 20],
             NULL, 'production',
             CASE WHEN (h / 17) % 1000 = 7 THEN 'anticheat flagged speedhack on player ' || ((h / 108) % 5000)
                  ELSE (ARRAY['player ' || ((h / 108) % 5000) || ' joined the server','player ' || ((h / 108) % 5000) || ' left (quit)','[OOC] anyone selling a car near legion square?',
                              'bank transfer of ' || (h % 90000) || ' completed','vehicle adder spawned at garage 3','job changed to mechanic','inventory item moved'])[1 + (h / 19) % 7] END,
             jsonb_build_object('amount', h % 90000, 'coords', jsonb_build_object('x', h % 1000, 'y', h % 700))
               || CASE WHEN (h / 9) % 12 = 0 THEN jsonb_build_object('playerName', 'Player' || ((h / 108) % 5000)) ELSE '{{}}'::jsonb END
      FROM (SELECT i, (hashint4(i) & 2147483647) AS h FROM generate_series({lo}, {hi}) i) s;"""
    psql_parallel([insert(1, EVENTS // 2), insert(EVENTS // 2 + 1, EVENTS)])
    # ingestion keeps the hourly counts in each batch's transaction; a load that bypasses it
    # builds them as migrations 11 and 14 do for the events they find
    psql("""INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n)
      SELECT server_id, date_trunc('hour', occurred_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', level, event_type, coalesce(resource, ''), count(*)
      FROM log_events GROUP BY 1, 2, 3, 4, 5;
      INSERT INTO log_level_counts_15m (server_id, slot, level, n)
      SELECT server_id, date_bin(interval '15 minutes', occurred_at, timestamptz '1970-01-01 00:00:00+00'), level, count(*)
      FROM log_events GROUP BY 1, 2, 3""")
    # counts over 30 and 90 days read these kept tables for whole hours and slots: the queried
    # server's rows of the loaded week are repeated for the twelve weeks before it (the events
    # themselves are not; the partial units at a window's ends read events, and there are none
    # that old). Only that server's: all 100 servers' would be ~90M rows to load for nothing.
    psql(f"""INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n)
      SELECT server_id, hour - k * interval '7 days', level, event_type, resource, n
      FROM log_counts_hourly CROSS JOIN generate_series(1, 12) k WHERE server_id = '{big}' ON CONFLICT DO NOTHING;
      INSERT INTO log_level_counts_15m (server_id, slot, level, n)
      SELECT server_id, slot - k * interval '7 days', level, n
      FROM log_level_counts_15m CROSS JOIN generate_series(1, 12) k WHERE server_id = '{big}' ON CONFLICT DO NOTHING;
      ANALYZE log_counts_hourly; ANALYZE log_level_counts_15m""")
    # and the runs of words message search reads (as migration 13 builds them for stored events),
    # cut from each server's events in time order: ingestion's batches are contiguous in time,
    # while this load's batch ids are scattered over the week
    psql("""SET work_mem = '256MB';
      INSERT INTO log_runs (server_id, occurred_from, occurred_to, words)
      SELECT server_id, min(occurred_at), max(occurred_at), log_run_words(array_agg(message))
      FROM (SELECT server_id, occurred_at, message, date_trunc('day', occurred_at AT TIME ZONE 'UTC') AS day,
                   (row_number() OVER (PARTITION BY server_id, date_trunc('day', occurred_at AT TIME ZONE 'UTC') ORDER BY occurred_at, id) - 1) / 50 AS run
            FROM log_events) e
      GROUP BY server_id, day, run""")
    inserted = time.time()
    # One session: building the trigram index in a second session beside the others was slower
    # (324 s against 284 s for all index builds, same host), btree builds use parallel workers.
    psql("SET maintenance_work_mem = '1GB'; SET max_parallel_maintenance_workers = 2; " + buildable(defs) + ";"
         + "".join(d.replace("CREATE INDEX ", f"CREATE INDEX {name} ") + ";" for name, d in runs_index) + "ANALYZE log_runs;")
    rebuilt = psql("SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = 'log_events' AND indexname <> 'log_events_server_time'")
    assert sorted(secondary.split(",")) == rebuilt.split(","), (secondary, rebuilt)
    indexed = time.time()
    # the steady state `logs-api` keeps: closed partitions vacuumed after they received events
    # (GIN pending lists merged); today's partition is autovacuum's, settled here so that no
    # autovacuum of a freshly loaded partition runs during the measurements
    sh(f"{BIN}/stowctl logs maintain", env={**os.environ, "DATABASE_URL": DB})
    # only the partitions `maintain` left (today's); a VACUUM of the whole table would scan every
    # GIN index again; ANALYZE of the parent gives the planner its partition-wide statistics
    fresh = psql("SELECT string_agg(relname, ',') FROM pg_stat_user_tables WHERE relname LIKE 'log_events_p%' AND last_vacuum IS NULL")
    psql("".join(f"VACUUM (ANALYZE) {t};" for t in fresh.split(",") if t) + "ANALYZE log_events;")
    # the load leaves gigabytes of dirty buffers; without this the checkpoint that writes them out
    # runs through the measurements (seen: 4.4 GB written over 280 s; the first case's p95 went from 7 to 21 ms)
    psql("CHECKPOINT")
    load = time.time() - t0
    tables["query_load"] = {"events": EVENTS, "seconds": round(load, 1), "insert_s": round(inserted - t0, 1),
                            "index_s": round(indexed - inserted, 1), "vacuum_s": round(time.time() - indexed, 1)}
    now = time.time()
    window = {"serverId": "devsrv", "from": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 7 * 86400 + 60)), "to": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 60))}
    cases = {
        "no filter": {}, "level": {"level": "error"}, "eventType": {"eventType": "economy.transfer"}, "resource": {"resource": "police"},
        "playerId": {"playerId": "1234"}, "identifier": {"identifier": {"owner": "player", "key": "license", "value": "license:" + hashlib.md5(b"1234").hexdigest()}},
        "message (rare)": {"message": "speedhack"}, "message (often)": {"message": "joined"},
        # rare (a few dozen matches in the week) but made of common parts: "transfer" is in a
        # seventh of the events, and the trigrams of "4242" in many amounts and player numbers
        "message (rare phrase)": {"message": "transfer of 4242"},
        "level + resource": {"level": "warn", "resource": "bank"}, "minLevel warn": {"minLevel": "warn"},
    }
    rows = []
    conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=60)
    def timed(body):
        t0 = time.perf_counter()
        conn.request("POST", "/v1/logs/query", body=json.dumps(body), headers={"Authorization": f"Bearer {dev_key}", "Content-Type": "application/json"})
        r = conn.getresponse()
        data = json.loads(r.read())
        assert r.status == 200, data
        return (time.perf_counter() - t0) * 1000, data
    reps = 20 if QUICK else 40
    def walk(body):
        pages, b = [], dict(body)
        for _page in range(5):
            ms, data = timed(b)
            pages.append(ms)
            if not data["pagination"]["hasMore"]:
                break
            b = {**body, "cursor": data["pagination"]["nextCursor"]}
        return pages
    for name, filters in cases.items():
        body = {**window, **filters, "limit": 100}
        cold = walk(body)  # the first walk reads what is not cached yet; reported, not in the p95
        first = [timed(body)[0] for _ in range(reps)]
        walk_pages = []
        for _ in range(max(3, reps // 4)):
            walk_pages += walk(body)
        target = 100 if name.startswith("message") else 20
        rows.append({"case": name, "cold_first": round(cold[0], 2), "cold_walk": round(sum(cold), 2),
                     "first_p50": round(pct(first, 50), 2), "first_p95": round(pct(first, 95), 2),
                     "walk_p50": round(pct(walk_pages, 50), 2), "walk_p95": round(pct(walk_pages, 95), 2), "target_ms": target,
                     "met": pct(first, 95) <= target and pct(walk_pages, 95) <= target})
        results.append({"name": f"query_{name.replace(' ', '_').replace('(', '').replace(')', '').replace('+', 'and')}_p95_ms", "value": rows[-1]["first_p95"],
                        "unit": "ms", "baseline": None, "ratio": None, "runs": reps, "min": round(min(first), 3), "max": round(max(first), 3),
                        "target": f"≤ {target} ms", "note": f"first page; 5-page walk p95 {rows[-1]['walk_p95']} ms"})
        log(f"query {name}: first p95 {rows[-1]['first_p95']} ms, walk p95 {rows[-1]['walk_p95']} ms")
    conn.close()
    tables["query"] = rows
    bench_explorer(dev_key)


def bench_explorer(dev_key):
    """Counts, facets and export over the query set: p95 of sequential requests, and an export's
    throughput and the growth of cdn-api's RSS while it streams."""
    now = time.time()
    day = {"serverId": "devsrv", "from": iso(now - 86400), "to": iso(now + 60)}
    week = {"serverId": "devsrv", "from": iso(now - 7 * 86400 + 60), "to": iso(now + 60)}
    month = {"serverId": "devsrv", "from": iso(now - 30 * 86400), "to": iso(now + 60)}
    quarter = {"serverId": "devsrv", "from": iso(now - 90 * 86400 + 3600), "to": iso(now + 60)}
    cases = [
        ("counts 24h", "/v1/logs/counts", day, 100),
        ("counts 24h eventType", "/v1/logs/counts", {**day, "eventType": "economy.transfer"}, 100),
        ("counts 24h message (rare)", "/v1/logs/counts", {**day, "message": "speedhack"}, None),
        ("counts 24h message (often)", "/v1/logs/counts", {**day, "message": "joined"}, None),
        ("counts 7d", "/v1/logs/counts", week, 250),
        ("counts 7d eventType", "/v1/logs/counts", {**week, "eventType": "economy.transfer"}, 250),
        ("counts 30d", "/v1/logs/counts", month, 300),
        ("counts 30d eventType", "/v1/logs/counts", {**month, "eventType": "economy.transfer"}, 300),
        ("counts 90d", "/v1/logs/counts", quarter, 800),
        ("counts 90d eventType", "/v1/logs/counts", {**quarter, "eventType": "economy.transfer"}, 800),
        ("players by name 30d all servers", "/v1/logs/players", {"name": "player1234", "from": month["from"], "to": month["to"]}, None),
        ("player 30d all servers", "/v1/logs/player", {"player": "license:" + hashlib.md5(b"1234").hexdigest(), "from": month["from"], "to": month["to"], "limit": 50}, 50),
        ("facets 24h", "/v1/logs/facets", day, None),
        ("patterns 24h", "/v1/logs/patterns", day, None),
        ("query 24h eventType", "/v1/logs/query", {**day, "eventType": "economy.transfer"}, None),
        ("query 24h eventType prefix", "/v1/logs/query", {**day, "eventType": "economy.*"}, None),
        ("query 24h exclude resource", "/v1/logs/query", {**day, "exclude": {"resources": ["police"]}}, None),
        ("query 24h exclude eventType", "/v1/logs/query", {**day, "eventType": "economy.*", "exclude": {"eventTypes": ["economy.tax"]}}, None),
        ("query 24h dataWhere", "/v1/logs/query", {**day, "eventType": "economy.transfer", "dataWhere": [{"path": "amount", "op": ">", "value": 89000}]}, None),
        ("query 24h data filter", "/v1/logs/query", {**day, "data": {"amount": 4242}}, None),
        ("query 24h data filter + eventType", "/v1/logs/query", {**day, "eventType": "economy.transfer", "data": {"amount": 4242}}, None),
    ]
    conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=120)
    def timed(path, body):
        t0 = time.perf_counter()
        conn.request("POST", path, body=json.dumps(body), headers={"Authorization": f"Bearer {dev_key}", "Content-Type": "application/json"})
        r = conn.getresponse()
        data = json.loads(r.read())
        return (time.perf_counter() - t0) * 1000, r.status, data
    reps = 20 if QUICK else 30
    rows = []
    for name, path, body, target in cases:
        _, status, data = timed(path, body)  # unmeasured: the first read of what is not cached
        ms = []
        for _ in range(reps):
            t, status, data = timed(path, body)
            ms.append(t)
        what = {"/v1/logs/counts": lambda d: f"{d['total']:,} events in {len(d['buckets'])} buckets of {d['interval']}",
                "/v1/logs/facets": lambda d: f"{d['examined']:,} events examined, sampled {d['sampled']}",
                "/v1/logs/patterns": lambda d: f"{len(d['patterns'])} patterns of {d['examined']:,} events, sampled {d['sampled']}",
                "/v1/logs/query": lambda d: f"{len(d['events'])} events on the first page",
                "/v1/logs/players": lambda d: f"{len(d['matches'])} players of {len(d['servers'])} servers",
                "/v1/logs/player": lambda d: f"{len(d['events'])} events on the first page of {len(d['servers'])} servers, {d['summary']['examined']:,} summarized"}[path](data) if status == 200 else f"HTTP {status} {data.get('error', {}).get('code')}"
        rows.append({"case": name, "p50": round(pct(ms, 50), 1), "p95": round(pct(ms, 95), 1), "target": target, "answer": what})
        results.append({"name": "explorer_" + name.replace(" ", "_").replace("(", "").replace(")", "") + "_p95_ms", "value": round(pct(ms, 95), 1), "unit": "ms",
                        "baseline": None, "ratio": None, "runs": reps, "min": round(min(ms), 1), "max": round(max(ms), 1),
                        "target": None if target is None else f"≤ {target} ms", "note": f"{path}; {what}; p50 {pct(ms, 50):.1f} ms"})
        log(f"{name}: p95 {pct(ms, 95):.1f} ms ({what})")
    # issue 40's ratios (a prefix or an exclusion within 1.5× the exact type's p95), paired: at
    # 3-8 ms one case's p95 after the other's moved with the host by more than the ratio allows
    # (0.68× and 1.83× in two runs of one build), so each is timed in alternation with the exact
    # filter and both p95s come from the same minutes
    exact = next(body for name, _, body, _ in cases if name == "query 24h eventType")
    for name in ("query 24h eventType prefix", "query 24h exclude resource", "query 24h exclude eventType"):
        body = next(b for n, _, b, _ in cases if n == name)
        base, this = [], []
        for _ in range(2 * reps):
            base.append(timed("/v1/logs/query", exact)[0])
            this.append(timed("/v1/logs/query", body)[0])
        ratio = pct(this, 95) / pct(base, 95)
        results.append({"name": "explorer_" + name.replace(" ", "_") + "_vs_exact_p95_ms", "value": round(pct(this, 95), 1), "unit": "ms",
                        "baseline": round(pct(base, 95), 1), "ratio": round(ratio, 3), "runs": 2 * reps, "min": round(min(this), 1), "max": round(max(this), 1),
                        "target": "≤ 1.5× the exact type",
                        "note": f"/v1/logs/query, timed in alternation with the exact type (eventType economy.transfer, the baseline column); "
                                f"p50 {pct(this, 50):.1f} against {pct(base, 50):.1f} ms"})
        log(f"{name} paired with the exact type: p95 {pct(this, 95):.1f} against {pct(base, 95):.1f} ms ({ratio:.2f}×)")
    conn.close()
    tables["explorer"] = rows
    # export: about a million events of the busiest server (a fifth of the set over 7 days)
    days = 7 * 1_000_000 / (EVENTS / 5) if not QUICK else 7
    window = f"serverId=devsrv&from={iso(now - days * 86400)}&to={iso(now + 60)}"
    pid = cdn_pid()
    rss = lambda: int(next(l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")).split()[1]) / 1024
    before, peak, done = rss(), [0.0], threading.Event()
    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.02)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    conn = http.client.HTTPConnection("127.0.0.1", CDN, timeout=120)
    t0 = time.perf_counter()
    conn.request("GET", f"/v1/logs/export?{window}", headers={"Authorization": f"Bearer {dev_key}"})
    r = conn.getresponse()
    assert r.status == 200, r.read()
    size = lines = 0
    while True:
        chunk = r.read(1 << 16)
        if not chunk:
            break
        size += len(chunk)
        lines += chunk.count(b"\n")
    elapsed = time.perf_counter() - t0
    done.set()
    sampler.join()
    conn.close()
    note = f"NDJSON, {lines:,} events ({size / 1e6:,.0f} MB) of one server in {elapsed:.1f} s, read as fast as they come over one connection"
    results.append({"name": "explorer_export_mb_per_s", "value": round(size / elapsed / 1e6, 1), "unit": "MB/s", "baseline": None, "ratio": None,
                    "runs": 1, "min": round(size / elapsed / 1e6, 1), "max": round(size / elapsed / 1e6, 1), "target": None, "note": note})
    growth = max(0.0, peak[0] - before)
    results.append({"name": "explorer_export_rss_growth_mib", "value": round(growth, 1), "unit": "MiB", "baseline": round(before, 1), "ratio": None,
                    "runs": 1, "min": round(growth, 1), "max": round(growth, 1), "target": "a few MiB (≤ 8)",
                    "note": f"peak VmRSS of cdn-api during that export minus before it (baseline column: RSS before, MiB); sampled every 20 ms"})
    log(f"export: {lines:,} events, {size / elapsed / 1e6:.1f} MB/s, RSS +{growth:.1f} MiB")



CONSOLE = 18082
SIGNIN_RATE = 50


def sign_in_flood(stop, statuses):
    """Password sign-ins at SIGNIN_RATE a second, open loop, until `stop` is set: each for a name
    nobody has, from its own forwarded address (TRUSTED_PROXIES is loopback), so no throttle
    answers first and every one costs an Argon2id check, the same as a wrong password."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=256)

    def one(i):
        conn = http.client.HTTPConnection("127.0.0.1", CONSOLE, timeout=30)
        try:
            conn.request("POST", "/session", body=json.dumps({"login": f"flood{i}", "password": "not the right password"}),
                         headers={"Content-Type": "application/json", "X-Forwarded-For": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"})
            status = conn.getresponse().status
        except OSError:
            status = 0
        finally:
            conn.close()
        statuses.append(status)

    t0, i = time.monotonic(), 0
    while not stop.is_set():
        due = t0 + i / SIGNIN_RATE
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        pool.submit(one, i)
        i += 1
    pool.shutdown(wait=True)


def bench_signin(key):
    """API and delivery p95 while 50 password sign-ins a second arrive, against the same wrk runs
    with no sign-ins, paired run by run (issue 43: within 2x of idle)."""
    stop_all_services()
    services({"CONSOLE_ADDR": f"127.0.0.1:{CONSOLE}", "TRUSTED_PROXIES": "127.0.0.1/32"})
    wait_http(f"http://127.0.0.1:{CONSOLE}/")
    obj = upload(key, "signin-10kb.bin", os.urandom(10 * 1024), path="signin")
    targets = [("api", f"http://127.0.0.1:{CDN}/v1/objects?path=signin&limit=10", key), ("delivery", obj["publicUrl"], None)]
    seconds = 5 if QUICK else 15
    idle = {name: [] for name, _, _ in targets}
    flooded = {name: [] for name, _, _ in targets}
    statuses = []
    for _ in range(RUNS):
        for name, url, auth in targets:
            env = {"BENCH_AUTH": auth or ""}
            r = wrk(url, "scripts/bench/report.lua", conns=16, duration=seconds, env=env)
            assert r["errors"] == 0 and r["non2xx"] == 0, r
            idle[name].append(r["p95_us"] / 1000)
            stop = threading.Event()
            flood = threading.Thread(target=sign_in_flood, args=(stop, statuses))
            flood.start()
            time.sleep(1)  # the flood's queue fills before measuring
            try:
                r = wrk(url, "scripts/bench/report.lua", conns=16, duration=seconds, env=env)
            finally:
                stop.set()
                flood.join()
            assert r["errors"] == 0 and r["non2xx"] == 0, r
            flooded[name].append(r["p95_us"] / 1000)
    counts = {str(k): statuses.count(k) for k in sorted(set(statuses))}
    note = f"16 connections, {seconds} s; {SIGNIN_RATE} sign-ins/s from distinct addresses and names; answers {counts}"
    record("signin_flood_api_p95_ms", flooded["api"], "ms", idle["api"], "≤ 2× idle", "GET /v1/objects?limit=10 with a key; " + note)
    record("signin_flood_delivery_p95_ms", flooded["delivery"], "ms", idle["delivery"], "≤ 2× idle", "GET publicUrl (10 KiB); " + note)
    stop_all_services()
    services()

def table_row(r, note_prefix=""):
    base = "" if r["baseline"] is None else f"{r['baseline']:,}"
    ratio = "" if r["ratio"] is None else r["ratio"]
    return f"| `{r['name']}` | {r['value']:,} | {r['min']:,}–{r['max']:,} | {r['unit']} | {base} | {ratio} | {r['target'] or ''} | {note_prefix}{r['note']} |"


def analysis():
    """The hand-written analysis that ends docs/benchmarks.md (scripts/bench/notes.md), or None."""
    notes = os.path.join(ROOT, "scripts", "bench", "notes.md")
    return open(notes).read().rstrip() if os.path.exists(notes) else None


def refresh_rows(only, started):
    """A subset run (`BENCH_ONLY`) in full mode replaces its own rows of docs/benchmarks.md's main
    table (or adds them at its end), each marked with the run it came from, and the analysis with
    scripts/bench/notes.md; the rest of the report stays as the last full run wrote it."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    if QUICK or not os.path.exists(path):
        return False
    lines = open(path).read().split("\n")
    stamp = f"(`BENCH_ONLY={','.join(sorted(only))} scripts/bench.sh full`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}) "
    rows = [i for i, l in enumerate(lines) if l.startswith("| `")]
    end = rows[0]
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    for r in results:
        if r["name"].startswith("query_"):
            continue
        row = table_row(r, stamp)
        at = next((i for i in range(end) if lines[i].startswith(f"| `{r['name']}` |")), None)
        if at is None:
            lines.insert(end, row)
            end += 1
        else:
            lines[at] = row
    for table, heading, section in (("query", "## Log queries", query_section),
                                    ("index_cost", "## Ingest cost of each index", index_cost_section),
                                    ("soak", "## Sustained ingestion", soak_section)):
        start = next((i for i, l in enumerate(lines) if l.startswith(heading)), None)
        if table in tables and start is None:
            # a section this report does not have yet goes before the analysis
            start = next((i for i, l in enumerate(lines) if l.startswith("## Analysis")), len(lines))
            lines[start:start] = section(tables) + [""]
        elif table in tables:
            stop = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
            lines[start:stop] = section(tables) + [""]
    # the hand-written analysis is the report's tail, as write_report puts it
    heading = next((i for i, l in enumerate(lines) if l.startswith("## Analysis")), None)
    text = analysis()
    if heading is not None and text is not None:
        lines[heading:] = text.split("\n") + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return True


def index_cost_section(tables):
    """The "Ingest cost of each index" section of docs/benchmarks.md (heading first)."""
    ic = tables["index_cost"]
    lines = ["## Ingest cost of each index", "",
             f"COPY of {ic['rows']:,} real rows into an unpartitioned scratch copy of `log_events`: {ic['bare_rows_per_s']:,} rows/s with no index; "
             "with each index of the shipped set alone (the indexes of `log_runs` are not here: that table gets a row per 50 events "
             "or fewer, and the ceiling row measures them with the rest):", "", "| index | rows/s | slowdown vs no index |", "|---|---|---|"]
    for r in ic["indexes"]:
        lines.append(f"| `{r['index']}` | {r['rows_per_s']:,} | {r['slowdown_pct']}% |")
    return lines


def query_section(tables):
    """The "Log queries" section of docs/benchmarks.md (heading first, no trailing blank line)."""
    q = tables["query_load"]
    lines = ["", f"## Log queries (`POST /v1/logs/query`)", "",
              f"{q['events']:,} events over 7 days across 100 servers (one with a fifth of them, queried here), loaded with "
              f"`INSERT … SELECT generate_series` into the real schema and indexed in {q['seconds']} s "
              f"(insert {q['insert_s']} s in two sessions, index builds {q['index_s']} s, `stowctl logs maintain` and `VACUUM (ANALYZE)` {q['vacuum_s']} s). Latency per request "
              "measured sequentially over one keep-alive connection (first page, and every page of 5-page cursor walks), limit 100, "
              "after one unmeasured walk per case; that first walk (pages not yet in Postgres's cache, read from disk) is shown as "
              "\"cold\": first page and the whole 5-page walk.", "",
              "| case | cold first page | cold 5-page walk | first page p50 | first page p95 | walk page p50 | walk page p95 | target p95 | met |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in tables["query"]:
        lines.append(f"| {r['case']} | {r.get('cold_first', '–')} ms | {r.get('cold_walk', '–')} ms | {r['first_p50']} ms | {r['first_p95']} ms | {r['walk_p50']} ms | {r['walk_p95']} ms | ≤ {r['target_ms']} ms | {'yes' if r['met'] else '**no**'} |")
    if "explorer" in tables:
        lines += ["", "Explorer reads over the same set (`explorer_*` rows of the main table; sequential requests, one unmeasured first):", "",
                  "| case | p50 | p95 | target p95 | answer |", "|---|---|---|---|---|"]
        for r in tables["explorer"]:
            target = "–" if r["target"] is None else f"≤ {r['target']} ms"
            lines.append(f"| {r['case']} | {r['p50']} ms | {r['p95']} ms | {target} | {r['answer']} |")
    return lines[1:]


def write_report(info, started):
    os.makedirs(os.path.join(ROOT, "target", "bench"), exist_ok=True)
    with open(os.path.join(ROOT, "target", "bench", "results.json"), "w") as f:
        json.dump({"mode": MODE, "machine": info, "results": results, "tables": tables}, f, indent=2)
    cmd = "just bench" if not QUICK else "just bench-quick"
    lines = [
        "# Benchmarks", "",
        f"Generated by `{cmd}` (`scripts/bench.py {MODE}`) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}; "
        f"took {(time.time() - started) / 60:.1f} min. Machine-readable: `target/bench/results.json`.", "",
        f"Machine: {info['cores']} cores ({info['cpu']}), {info['memory_gib']} GiB, Linux {info['kernel']}, PostgreSQL {info['postgres']}. "
        "Everything — load generator, services, nginx, Postgres — shares these cores over loopback, and the machine is shared and noisy: "
        "read ratios and medians, not absolute numbers.", "",
        "PostgreSQL is a cluster of the harness's own (port 15432, fresh `initdb`), with the settings docs/operations.md recommends: "
        + ", ".join(f"`{k}={v}`" for k, v in pg_settings().items()) + ".", "",
        f"Mode `{MODE}`: {RUNS} runs per figure, {DURATION} s each (wrk); {OBJECTS:,} objects for listing; {EVENTS:,} events for queries.", "",
        "| figure | median | spread (min–max) | unit | baseline (same run) | ratio | target | notes |", "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r["name"].startswith("query_"):
            continue
        lines.append(table_row(r))
    if "query" in tables:
        lines += [""] + query_section(tables)
    if "index_cost" in tables:
        lines += [""] + index_cost_section(tables)
    if "soak" in tables:
        lines += [""] + soak_section(tables)
    text = analysis()
    if text is not None:
        lines += ["", text]
    with open(os.path.join(ROOT, "docs", "benchmarks.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    started = time.time()
    try:
        keys = setup()
        info = machine()
        org_id = keys["orgId"]
        services()
        only = {x for x in os.environ.get("BENCH_ONLY", "").split(",") if x}
        sections = [
            ("delivery", lambda: bench_delivery(keys["developerKey"])),
            ("upload", lambda: bench_upload(keys["developerKey"])),
            ("renditions", lambda: bench_renditions(keys["developerKey"])),
            ("presigned", lambda: bench_presigned(keys["developerKey"])),
            ("listing", lambda: bench_listing(keys["developerKey"], org_id)),
            ("listing", lambda: bench_object_search(keys["developerKey"])),
            ("listing", lambda: bench_folders(keys["developerKey"], org_id)),
            ("listing", lambda: bench_delete_folder(keys["developerKey"], org_id)),
            ("listing", lambda: bench_lifecycle(keys["developerKey"], org_id)),
            ("ingest", lambda: bench_ingest(keys["serverKey"])),
            ("ingest", bench_ceiling),
            ("ingest", lambda: bench_tail(keys["serverKey"], keys["developerKey"])),
            ("query", lambda: bench_query(keys["developerKey"], org_id)),
            ("ingest-ab", lambda: bench_ingest_ab(keys["serverKey"])),
            ("explorer-ab", lambda: bench_explorer_ab(keys["developerKey"])),
            ("alerts", lambda: bench_alerts(keys["serverKey"], keys["developerKey"])),
            ("rss", lambda: bench_rss(keys["developerKey"])),
            ("rss", lambda: bench_zip_rss(keys["developerKey"])),
            ("signin", lambda: bench_signin(keys["developerKey"])),
            # last: it empties the log tables
            ("soak", lambda: bench_soak(keys["serverKey"])),
        ]
        for name, run in sections:
            if not only or name in only:
                log(name)
                run()
        if only:
            # a subset never overwrites the full report
            os.makedirs(os.path.join(ROOT, "target", "bench"), exist_ok=True)
            with open(os.path.join(ROOT, "target", "bench", "results.json"), "w") as f:
                json.dump({"mode": MODE, "only": sorted(only), "machine": info, "results": results, "tables": tables}, f, indent=2)
            if refresh_rows(only, started):
                log("wrote target/bench/results.json; refreshed this subset's rows of docs/benchmarks.md")
            else:
                log("wrote target/bench/results.json (quick subset; docs/benchmarks.md unchanged)")
            return
        write_report(info, started)
        log("wrote docs/benchmarks.md and target/bench/results.json")
    finally:
        statements_report()
        hold()
        stop_all()


def hold():
    """With `BENCH_HOLD=<file>`: keep the cluster and the services up after the sections, for
    `EXPLAIN` on the loaded set (psql -h 127.0.0.1 -p 15432 -U postgres), until that file is
    removed."""
    path = os.environ.get("BENCH_HOLD")
    if not path:
        return
    open(path, "w").close()
    log(f"holding the cluster on port {PG_PORT}; remove {path} to stop")
    while os.path.exists(path):
        time.sleep(2)


def statements_report():
    """With `BENCH_PG_EXTRA=shared_preload_libraries=pg_stat_statements`, where the cluster's
    time went: the 40 statements that took the most, written to target/bench/statements.txt."""
    if "pg_stat_statements" not in os.environ.get("BENCH_PG_EXTRA", ""):
        return
    try:
        psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        out = psql("SELECT round(total_exec_time)::int8 || ' ms | ' || calls || ' calls | ' || rows || ' rows | ' || "
                   "left(regexp_replace(query, '\\s+', ' ', 'g'), 160) FROM pg_stat_statements "
                   "ORDER BY total_exec_time DESC LIMIT 40")
    except Exception as e:  # a report for the curious: never the reason a run fails
        log(f"statements report failed: {e}")
        return
    os.makedirs("target/bench", exist_ok=True)
    with open("target/bench/statements.txt", "w") as f:
        f.write(out + "\n")
    log("wrote target/bench/statements.txt")


if __name__ == "__main__":
    main()
