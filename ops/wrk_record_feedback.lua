-- wrk script of ops/bench.py (issue 12, figure 1): POST /factory/feedback with a body and an
-- Idempotency-Key that no other request of the run repeats, so every request is a new
-- command (a repeat would answer 200 from what is stored, and measure less work).
--
--   BENCH_KEY=<api key> BENCH_RUN=<unique per run> wrk -s ops/wrk_record_feedback.lua ...
--
-- With BENCH_BATCH=<n> it POSTs /factory/feedback:batch with n items instead (figure 2).
-- With BENCH_DELAY_MS=<ms> each connection waits that long before its next request, which
-- holds the load near a rate instead of at the most the server can take (figure 4).
-- At the end it prints one line of JSON that ops/bench.py reads.

local key = os.getenv("BENCH_KEY") or ""
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local batch = tonumber(os.getenv("BENCH_BATCH") or "0")
local pause = tonumber(os.getenv("BENCH_DELAY_MS") or "0")
local threads = {}
local counter = 0
local prefix = ""

function setup(thread)
   thread:set("id", #threads + 1)
   table.insert(threads, thread)
end

function init(args)
   prefix = run .. "-" .. tostring(id)
end

local function item(n, keyed)
   local ref = prefix .. "-" .. n
   local rating = 1 + n % 5
   local key_field = ""
   if keyed then
      key_field = ',"idempotencyKey":"' .. ref .. '"'
   end
   return '{"projectId":"bench","subjectKind":"run","subjectRef":"run-' .. ref
      .. '","kind":"rating","rating":' .. rating .. key_field .. '}'
end

function request()
   counter = counter + 1
   local headers = {
      ["Authorization"] = "Bearer " .. key,
      ["Content-Type"] = "application/json",
      ["Idempotency-Key"] = prefix .. "-" .. counter,
   }
   if batch > 0 then
      local items = {}
      for i = 1, batch do
         items[i] = item(counter * batch + i, true)
      end
      local body = '{"items":[' .. table.concat(items, ",") .. ']}'
      return wrk.format("POST", "/factory/feedback:batch", headers, body)
   end
   return wrk.format("POST", "/factory/feedback", headers, item(counter, false))
end

function delay()
   return pause
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      '{"requests":%d,"duration_us":%d,"connect_errors":%d,"read_errors":%d,'
         .. '"write_errors":%d,"status_errors":%d,"timeouts":%d,'
         .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
      summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
