# Latency of one kazoo client on a ZooKeeper at HOST:PORT: N sequential reads (getData) and N
# sequential writes (setData) of one node, after a warm-up; prints one JSON object with each
# kind's p50 and p99 in milliseconds and its rate in ops/s.
#   python3 reports/serve/latency.py HOST:PORT [N]
import json, sys, time
import kazoo
from kazoo.client import KazooClient

hosts = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
zk = KazooClient(hosts=hosts, timeout=10)
zk.start()
path = "/zklab-latency"
zk.ensure_path(path)

def timed(op):
    for _ in range(200):
        op()
    took = []
    start = time.perf_counter()
    for _ in range(n):
        before = time.perf_counter()
        op()
        took.append(time.perf_counter() - before)
    elapsed = time.perf_counter() - start
    took.sort()
    return {
        "p50_ms": round(took[len(took) // 2] * 1000, 3),
        "p99_ms": round(took[int(len(took) * 0.99)] * 1000, 3),
        "ops_per_s": round(n / elapsed),
    }

result = {
    "kazoo": kazoo.__version__,
    "ops": n,
    "read": timed(lambda: zk.get(path)),
    "write": timed(lambda: zk.set(path, b"x" * 16)),
}
zk.delete(path)
zk.stop()
zk.close()
print(json.dumps(result))
