# Clients taking turns at one lock on a ZooKeeper, each telling zklab serve's claims port what it
# believes: `python3 lock_clients.py HOSTS CLAIMS_HOST:PORT [--recipe kazoo|own] [--planted]
# [--clients N] [--rounds K]`. `kazoo` is kazoo's own Lock, used as its documentation says (a
# state listener: on SUSPENDED the lock may be gone, on LOST it is); `own` is a lock written here
# on kazoo's plain operations, which finds its node after a lost create reply by the unique
# prefix of its name. `--planted` plants a mistake in `own`: a create whose reply was lost is
# taken as the lock, without looking for the node.
import argparse, logging, socket, threading, time, uuid
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionLoss, NoNodeError, SessionExpiredError, KazooException
from kazoo.retry import KazooRetry

LOCK = "/locks/the-lock"

class Claims:
    """One client's line to the claims port: a claim goes once the port has recorded it."""
    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.lines = self.sock.makefile("r")
        self.lock = threading.Lock()
    def tell(self, session, claim):
        with self.lock:
            self.sock.sendall(f"{session:#x} {claim}\n".encode())
            answer = self.lines.readline().strip()
            if answer != "ok":
                raise RuntimeError(f"claims port: {answer}")

def session_of(zk):
    return zk.client_id[0] if zk.client_id else 0

def own_acquire(zk, prefix, planted, deadline):
    """The lock recipe of ZooKeeper's recipes document, on kazoo's plain operations."""
    retry = KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5)
    try:
        node = zk.create(LOCK + "/" + prefix, b"", ephemeral=True, sequence=True, makepath=True)
    except ConnectionLoss:
        if planted:
            return None  # PLANTED: the create may have landed; taken as the lock unlooked
        node = None
        while node is None:
            mine = [c for c in retry(zk.get_children, LOCK) if c.startswith(prefix)]
            if mine:
                node = LOCK + "/" + mine[0]
            else:
                try:
                    node = zk.create(LOCK + "/" + prefix, b"", ephemeral=True, sequence=True)
                except ConnectionLoss:
                    pass
    name = node.rsplit("/", 1)[1]
    while True:
        children = sorted(retry(zk.get_children, LOCK), key=lambda c: c[-10:])
        if name not in children:
            raise SessionExpiredError()
        at = children.index(name)
        if at == 0:
            return node
        gone = threading.Event()
        if retry(zk.exists, LOCK + "/" + children[at - 1], watch=lambda event: gone.set()):
            gone.wait(1.0)
        if time.monotonic() > deadline:
            raise TimeoutError()

def client(args, number, stats):
    zk = KazooClient(hosts=args.hosts, timeout=4.0,
                     connection_retry=KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5))
    claims = Claims(args.claims)
    holding = threading.Event()
    def on_state(state):
        if holding.is_set() and state in (KazooState.SUSPENDED, KazooState.LOST):
            threading.Thread(target=claims.tell, args=(session_of(zk), state.lower())).start()
    zk.add_listener(on_state)
    zk.start()
    deadline = time.monotonic() + args.deadline
    rounds = 0
    lock = zk.Lock(LOCK, f"client-{number}")
    while rounds < args.rounds and time.monotonic() < deadline:
        prefix = uuid.uuid4().hex + "-lock-"
        try:
            session = session_of(zk)
            if args.recipe == "kazoo":
                if not lock.acquire(timeout=max(0.1, deadline - time.monotonic())):
                    break
                node = lock.node
            else:
                node = own_acquire(zk, prefix, args.planted, deadline)
            holding.set()
            claims.tell(session, f"granted {LOCK}")
            time.sleep(0.02)
            claims.tell(session, f"released {LOCK}")
            holding.clear()
            if args.recipe == "kazoo":
                lock.release()
            elif node is not None:
                KazooRetry(max_tries=-1, delay=0.05)(zk.delete, node)
            rounds += 1
        except TimeoutError:
            break
        except (KazooException, RuntimeError) as error:
            holding.clear()
            stats.append(type(error).__name__)
            time.sleep(0.1)
    stats.append(f"client {number}: {rounds} rounds")
    zk.stop()
    zk.close()

def main():
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser()
    parser.add_argument("hosts")
    parser.add_argument("claims")
    parser.add_argument("--recipe", choices=["kazoo", "own"], default="kazoo")
    parser.add_argument("--planted", action="store_true")
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--deadline", type=float, default=20.0)
    args = parser.parse_args()
    stats = []
    threads = [threading.Thread(target=client, args=(args, n, stats)) for n in range(args.clients)]
    for t in threads: t.start()
    for t in threads: t.join()
    print("\n".join(s for s in stats if s.startswith("client")))

main()
