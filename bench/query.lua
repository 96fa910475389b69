-- wrk script: POST /query with the body bench/http-fill.py wrote (path in env QUERY_BODY).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open(os.getenv("QUERY_BODY") or "/tmp/query.json", "r")
wrk.body = f:read("*a")
f:close()
