-- wrk script: POST transactions, retained_purchase, each request paying a fresh booking with its
-- own Idempotency-Key, as `npm run bench` does. Lines come from the kit's
-- retained-purchases.tsv (`<Idempotency-Key><TAB><JSON body>`, written by `npm run bench:serve`).
--
--   wrk -t2 -c50 -d10s --latency -H 'Authorization: Bearer …' -s bench/replay/retained.lua URL -- 2 KIT/retained-purchases.tsv 5001
--
-- Arguments after `--`: the number of wrk threads (the same as -t: thread k sends lines k,
-- k + threads, ..., so no two requests pay the same booking), the file, and optionally the first
-- line to use (default 1), so a warm-up and the measured run use different bookings. Once a thread has
-- used its lines it sends its last body again under a new key: the booking is paid, the answer
-- is a 400, and wrk reports it among the non-2xx answers instead of the run quietly measuring
-- idempotent replays. Each line pays once.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

local lines = {}
local sent = 0
exhausted = 0

function init(args)
  local count = tonumber(args[1])
  local path = args[2]
  local first = tonumber(args[3] or "1")
  assert(count and path and first, "arguments after --: <threads> <retained-purchases.tsv> [first line]")
  assert(id <= count, "more wrk threads than the <threads> argument")
  local number = 0
  for line in io.lines(path) do
    if number >= first - 1 and (number - first + 1) % count == id - 1 then table.insert(lines, line) end
    number = number + 1
  end
  assert(#lines > 0, "no lines for this thread in " .. path)
end

function request()
  sent = sent + 1
  local line = lines[sent]
  local suffix = ""
  if line == nil then
    exhausted = exhausted + 1
    line = lines[#lines]
    suffix = "-again-" .. exhausted
  end
  local key, body = line:match("^([^\t]+)\t(.*)$")
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  headers["Content-Type"] = "application/json"
  headers["Idempotency-Key"] = key .. suffix
  return wrk.format("POST", nil, headers, body)
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    local again = thread:get("exhausted")
    if again and again > 0 then
      io.write(string.format("thread %d ran out of fresh bookings: %d requests paid a paid booking again (400)\n", thread:get("id"), again))
    end
  end
end
