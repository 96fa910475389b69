-- wrk script: POST /query with a body bench/http-fill.py or dev.kvindexer.bench.CppQueryFill wrote (path in env
-- QUERY_BODY); a path ending in .msgpack is sent as application/msgpack. QUERY_METHOD=GET sends the same body to
-- another route (the transport reference: GET /health carrying the query's bytes).
local path = os.getenv("QUERY_BODY") or "/tmp/query.json"
wrk.method = os.getenv("QUERY_METHOD") or "POST"
wrk.headers["Content-Type"] = path:match("%.msgpack$") and "application/msgpack" or "application/json"
local f = io.open(path, "rb")
wrk.body = f:read("*a")
f:close()

-- The tail wrk's --latency table leaves out: p50, p99 and p99.9 in ms, one line, for BENCHMARKS.md.
function done(summary, latency, requests)
   io.write(string.format("tail p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms\n",
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000))
end
