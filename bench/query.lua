-- wrk script: POST /query with a body bench/http-fill.py wrote (path in env QUERY_BODY); a path ending in
-- .msgpack is sent as application/msgpack. QUERY_METHOD=GET sends the same body to another route (the
-- transport reference: GET /health carrying the query's bytes).
local path = os.getenv("QUERY_BODY") or "/tmp/query.json"
wrk.method = os.getenv("QUERY_METHOD") or "POST"
wrk.headers["Content-Type"] = path:match("%.msgpack$") and "application/msgpack" or "application/json"
local f = io.open(path, "rb")
wrk.body = f:read("*a")
f:close()
