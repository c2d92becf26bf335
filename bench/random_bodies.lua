-- wrk script: POST JSON-RPC bodies picked at random from $RPC_BODIES_FILE (one body a line) to the
-- URL's path (/ or a method's own, e.g. /block). Used by bench/store_bench.py, bench/traffic_bench.py
-- and, with the marks below, bench/calls_bench.py's view-call rows.
-- In a body holding @ARGS@ that mark becomes the base64 of fresh ft_balance_of arguments at every
-- request, so no two requests carry the same params and the answer cache never answers them: every
-- $CALL_HOLDER_EVERY-th request asks the balance of one of $CALL_HOLDERS (comma-separated, in turn)
-- with a member the contract skips ("nonce", unique); the others ask for an account id never asked
-- before (valid, without a balance). $RPC_RUN names the run (one per wrk run of a server's life), so
-- runs never repeat each other.
-- With $CALL_ARGS_FILE (one JSON arguments template a line, each holding @NONCE@) the fresh
-- arguments are those lines in turn, from a point each thread picks at random, with @NONCE@ made
-- unique (bench/real_calls_bench.py: many real holders, token ids, pages): the contract skips
-- the member, the answer cache sees new params at every request.
-- An answer counts as an error unless it is HTTP 200 holding $RPC_EXPECT (default "result").
-- Prints one parseable line: RESULT rps=… p50_ms=… p99_ms=… errors=… requests=…
local bodies = {}
for line in io.lines(os.getenv("RPC_BODIES_FILE")) do
  bodies[#bodies + 1] = line
end
local expect = os.getenv("RPC_EXPECT") or '"result"'
local run = os.getenv("RPC_RUN") or tostring(os.time())
local holders = {}
for name in string.gmatch(os.getenv("CALL_HOLDERS") or "", "[^,]+") do
  holders[#holders + 1] = name
end
local holder_every = tonumber(os.getenv("CALL_HOLDER_EVERY") or "4")
local templates = {}
if os.getenv("CALL_ARGS_FILE") then
  for line in io.lines(os.getenv("CALL_ARGS_FILE")) do
    templates[#templates + 1] = line
  end
end
local threads = {}

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(text)
  local out = {}
  for i = 1, #text, 3 do
    local a, b, c = string.byte(text, i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local d1, d2 = math.floor(n / 262144) % 64, math.floor(n / 4096) % 64
    local d3, d4 = math.floor(n / 64) % 64, n % 64
    out[#out + 1] = string.sub(alphabet, d1 + 1, d1 + 1) .. string.sub(alphabet, d2 + 1, d2 + 1)
      .. (b and string.sub(alphabet, d3 + 1, d3 + 1) or "=") .. (c and string.sub(alphabet, d4 + 1, d4 + 1) or "=")
  end
  return table.concat(out)
end

function setup(thread)
  thread:set("seed", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + (tonumber(seed) or 0))
  errors = 0
  sent = 0
  first_template = math.random(math.max(#templates, 1))
end

local function fresh_args()
  sent = sent + 1
  local tag = string.format("%s-t%s-%d", run, seed or "0", sent)
  if #templates > 0 then
    local template = templates[(first_template + sent) % #templates + 1]
    return (string.gsub(template, "@NONCE@", tag, 1))
  end
  if #holders > 0 and sent % holder_every == 0 then
    local holder = holders[math.floor(sent / holder_every) % #holders + 1]
    return string.format('{"account_id":"%s","nonce":"%s"}', holder, tag)
  end
  return string.format('{"account_id":"fresh-%s.localnet"}', tag)
end

function request()
  local body = bodies[math.random(#bodies)]
  if string.find(body, "@ARGS@", 1, true) then
    body = string.gsub(body, "@ARGS@", base64(fresh_args()), 1)
  end
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  if status ~= 200 or not string.find(body, expect, 1, true) then
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
