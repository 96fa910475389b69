"""Fills a running kvindexer for the HTTP benchmark (BENCHMARKS.md) and writes the 8k-token query body.

usage: python3 bench/http-fill.py http://127.0.0.1:18090 /tmp/query.json
The msgpack body (the C++ Conductor's /query, which reads its own ZMQ-fed registrations, not these) comes from
dev.kvindexer.bench.CppQueryFill: python here has no msgpack or zmq module.
8 engines over POST /events, block size 16: engine e holds the first (e+1)*64 blocks of one 8,192-token
prompt plus 200 prompts of its own (821,504 device blocks in all).
"""
import json, random, urllib.request, sys
base = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else "query.json"
BS = 16
random.seed(7)
def post(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req).read()
prompt = [random.randrange(32000) for _ in range(8192)]
# 8 engines; engine e holds the first (e+1)*64 blocks of the 512-block prompt, plus 200 other prompts of 512 blocks
for e in range(8):
    post("/register", {"endpoint": "tcp://127.0.0.1:1", "type": "vLLM", "modelname": "m", "instance_id": "eng-%d" % e, "block_size": BS})
    evid = 0
    def store(tokens, seq_base):
        global evid
        n = len(tokens) // BS
        hashes = [seq_base + i for i in range(n)]
        post("/events", {"event_id": evid, "timestamp": 0, "event_type": "stored", "model_name": "m", "block_size": BS,
             "tenant_id": "default", "backend_id": "eng-%d" % e, "medium": "gpu", "dp_rank": 0,
             "seq_hashes": hashes, "base_block_idx": 0, "parent_hash": None, "token_ids": tokens})
        evid += 1
    store(prompt[: (e + 1) * 64 * BS], (e + 1) << 40)
    for p in range(200):
        store([random.randrange(32000) for _ in range(8192)], ((e + 1) << 40) + ((p + 1) << 20))
json.dump({"model_name": "m", "token_ids": prompt}, open(out, "w"))
print(urllib.request.urlopen(urllib.request.Request(base + "/query", data=open(out, "rb").read(), headers={"Content-Type": "application/json"})).read()[:300])
