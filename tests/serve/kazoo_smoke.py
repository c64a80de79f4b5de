# kazoo's client and its Lock, Counter, Queue and Election on a ZooKeeper at HOST:PORT, printing
# what each gives back: `python3 kazoo_smoke.py HOST:PORT`. On a fresh ZooKeeper 3.8 it prints
# kazoo_smoke.out; tests/serve.rs runs it on `zklab serve` and on a real server.
import sys, threading
from kazoo.client import KazooClient
hosts = sys.argv[1]
zk = KazooClient(hosts=hosts, timeout=10)
zk.start()
zk.ensure_path("/smoke/a")
zk.set("/smoke/a", b"hello")
print("get", zk.get("/smoke/a")[0])
print("children", sorted(zk.get_children("/smoke")))
zk.create("/smoke/e", b"", ephemeral=True, sequence=True)
print("ephemeral", sorted(zk.get_children("/smoke")))
t = zk.transaction(); t.create("/smoke/t1", b"x"); t.check("/smoke/a", 1); print("txn", t.commit())
seen = []
ev = threading.Event()
@zk.DataWatch("/smoke/a")
def watch(data, stat):
    seen.append(data)
    if len(seen) == 2: ev.set()
zk.set("/smoke/a", b"again")
ev.wait(5); print("watch", seen)
lock = zk.Lock("/smoke/lock", "me")
with lock: print("lock held", lock.is_acquired)
counter = zk.Counter("/smoke/counter"); counter += 5; counter -= 2; print("counter", counter.value)
q = zk.Queue("/smoke/queue"); q.put(b"one"); q.put(b"two"); print("queue", q.get(), q.get(), q.get())
election = zk.Election("/smoke/election", "me")
won = []
t = threading.Thread(target=lambda: election.run(lambda: won.append(True))); t.start(); t.join(5); print("election", won)
zk.delete("/smoke", recursive=True)
print("exists after", zk.exists("/smoke"))
zk.stop(); zk.close()
