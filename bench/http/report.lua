-- wrk script of the HTTP benchmark: the method and body come from the environment, and the
-- summary is printed as one JSON line that bench/http/run.ts reads.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
if body ~= nil and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
