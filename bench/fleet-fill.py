"""Fills a running kvindexer with a fleet whose every engine holds one system prompt, and writes a query body that
all of them answer (BENCHMARKS.md, "Wide answers").

usage: python3 bench/fleet-fill.py http://127.0.0.1:18090 /tmp/fleet-query.json [ENGINES]
ENGINES (default 1,000) engines registered over POST /register with names for instance ids (so their worker ids are
spread over the whole u64 range, as engines' are), block size 16; each stores the 2-block system prompt over
POST /events, and every tenth also a 6-block conversation after it. The query is the system prompt and the first
engine's conversation: 128 tokens, an answer of one instance per engine.
"""
import json, random, urllib.request, sys
base = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else "fleet-query.json"
engines = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
BS = 16
random.seed(11)
def post(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req).read()
system = [random.randrange(32000) for _ in range(2 * BS)]
first = None
for e in range(engines):
    name = "fleet-%d" % e
    post("/register", {"endpoint": "tcp://127.0.0.1:1", "type": "vLLM", "modelname": "m", "instance_id": name, "block_size": BS})
    def store(evid, tokens, seq_base):
        post("/events", {"event_id": evid, "timestamp": 0, "event_type": "stored", "model_name": "m", "block_size": BS,
             "tenant_id": "default", "backend_id": name, "medium": "gpu", "dp_rank": 0,
             "seq_hashes": [seq_base + i for i in range(len(tokens) // BS)], "base_block_idx": 0, "parent_hash": None,
             "token_ids": tokens})
    store(0, system, 1 << 40)
    if e % 10 == 0:
        conversation = system + [random.randrange(32000) for _ in range(6 * BS)]
        store(1, conversation, (e + 2) << 40)
        first = first or conversation
json.dump({"model_name": "m", "token_ids": first}, open(out, "w"))
answer = json.loads(urllib.request.urlopen(urllib.request.Request(base + "/query", data=open(out, "rb").read(),
                                                                   headers={"Content-Type": "application/json"})).read())
print("instances in the answer:", len(answer.get("scores", answer)) if isinstance(answer, dict) else len(answer))
