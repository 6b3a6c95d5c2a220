-- wrk script: optional headers from the environment and a machine-readable summary line.
function init(args)
  local auth = os.getenv("BENCH_AUTH")
  if auth and auth ~= "" then wrk.headers["Authorization"] = "Bearer " .. auth end
  local inm = os.getenv("BENCH_INM")
  if inm and inm ~= "" then wrk.headers["If-None-Match"] = inm end
  local body = os.getenv("BENCH_BODY_FILE")
  if body and body ~= "" then
    local f = io.open(body, "rb"); wrk.body = f:read("*a"); f:close()
    wrk.method = os.getenv("BENCH_METHOD") or "POST"
    wrk.headers["Content-Type"] = os.getenv("BENCH_CONTENT_TYPE")
  end
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH_JSON {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d,\"p50_us\":%d,\"p95_us\":%d,\"p99_us\":%d,\"errors\":%d,\"non2xx\":%d}\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end
