-- wrk script: POST JSON-RPC bodies picked at random from $RPC_BODIES_FILE (one body a line) to the
-- URL's path (/ or a method's own, e.g. /block),
-- and print one parseable line: rps, p50/p99 latency, errors (non-200 or no "result").
local bodies = {}
for line in io.lines(os.getenv("RPC_BODIES_FILE")) do
  bodies[#bodies + 1] = line
end
local threads = {}

function setup(thread)
  thread:set("seed", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + (tonumber(seed) or 0))
  errors = 0
end

function request()
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, bodies[math.random(#bodies)])
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) then
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + (tonumber(thread:get("errors")) or 0)
  end
  local socket = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%d requests=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, failed + socket, summary.requests))
end
