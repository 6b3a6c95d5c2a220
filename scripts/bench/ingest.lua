-- wrk script: 500-event FiveM-like batches, a unique batch_id per request.
-- The events are built once per thread; only the batch_id changes between requests.
local counter = 0
local thread_id = 0
local threads = {}
local prefix, suffix
body_len = 0

local kinds = {
  function(i) return string.format('{"level":"info","event_type":"player.join","message":"player %d joined","player_id":"%d","player_identifiers":{"license":"license:%040d","discord":"discord:%d","fivem":"fivem:%d","steam":"steam:1100001%08x"},"resource":"core","environment":"production","data":{"playerName":"Player%d","ip_hash":"a1b2c3d4e5f6","ping":%d,"queue_position":0,"session":"s-%d"}}', i, i % 2048, i, 100000 + i, 200000 + i, i, i % 2048, 20 + i % 80, i) end,
  function(i) return string.format('{"level":"info","event_type":"chat.message","message":"[OOC] player %d: anyone selling a car near legion square? gg","player_id":"%d","resource":"chat","data":{"channel":"ooc","length":57,"muted":false}}', i, i % 2048) end,
  function(i) return string.format('{"level":"warn","event_type":"economy.transfer","message":"bank transfer of %d from %d to %d","player_id":"%d","target_player_id":"%d","player_identifiers":{"license":"license:%040d"},"resource":"es_extended","data":{"amount":%d,"account":"bank","balance_after":%d,"reason":"transfer"}}', 1000 + i, i % 2048, (i * 7) % 2048, i % 2048, (i * 7) % 2048, i, 1000 + i, 50000 - i) end,
  function(i) return string.format('{"level":"info","event_type":"player.death","message":"player %d was killed by player %d","player_id":"%d","target_player_id":"%d","resource":"baseevents","data":{"weapon":"WEAPON_PISTOL","distance":%d.5,"headshot":false,"coords":{"x":215.1,"y":-810.2,"z":30.7}}}', i % 2048, (i * 3) % 2048, i % 2048, (i * 3) % 2048, i % 60) end,
  function(i) return string.format('{"level":"error","event_type":"admin.action","message":"admin kicked player %d: combat logging","player_id":"admin-%d","target_player_id":"%d","resource":"txAdmin","trace_id":"tr-%d","data":{"action":"kick","reason":"combat logging","duration":0}}', i % 2048, i % 5, i % 2048, i) end,
}

function setup(thread)
  thread:set("id", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  local events = {}
  for i = 1, 500 do
    events[i] = kinds[(i % #kinds) + 1](i)
  end
  prefix = '{"batch_id":"'
  suffix = '","events":[' .. table.concat(events, ",") .. ']}'
  body_len = #prefix + #suffix + 24
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")
end

function request()
  counter = counter + 1
  local batch = string.format("bench-%s-%d-%d", os.getenv("BENCH_RUN") or "r", id, counter)
  return wrk.format(nil, nil, nil, prefix .. batch .. suffix)
end

done = function(summary, latency, requests)
  io.write(string.format("BENCH_JSON {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d,\"p50_us\":%d,\"p95_us\":%d,\"p99_us\":%d,\"errors\":%d,\"non2xx\":%d,\"body_bytes\":%d}\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status, threads[1]:get("body_len")))
end
