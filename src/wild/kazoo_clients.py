# Clients taking turns at one of kazoo's exclusive recipes on a ZooKeeper, each telling zklab
# serve's claims port what it believes: `python3 kazoo_clients.py HOSTS CLAIMS_HOST:PORT
# [--recipe kazoo|semaphore|election|own] [--planted] [--clients N] [--rounds K] [--idle S]
# [--timeout T]`; the clients stop after K rounds each, or once no client has finished a round
# for S seconds (so a slow machine slows a run without cutting it short). Each recipe is used as
# kazoo's documentation says, with a state listener (on SUSPENDED what is held may be gone, on
# LOST it is): `kazoo` is its Lock, `semaphore` its Semaphore of 2 leases (`shared` claims, judged
# with `zklab serve --shared-by 2`), `election` its Election (a round: leading once, in the
# function `run` calls). `own` is a lock written here on kazoo's plain operations, which finds
# its node after a lost create reply by the unique prefix of its name, after a sync.
# `--planted` plants a mistake in `own`: a create whose reply was lost is taken as the lock,
# without looking for the node.
import argparse, logging, socket, threading, time, uuid
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (ConnectionLoss, KazooException, LockTimeout, NoNodeError,
                              SessionExpiredError)
from kazoo.retry import KazooRetry

LOCK = "/locks/the-lock"
SEMAPHORE, LEASES = "/semaphores/the-semaphore", 2
ELECTION = "/elections/the-election"

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

class Progress:
    """When any client last finished a round: a run stops once none has for `idle` seconds."""
    def __init__(self, idle):
        self.idle = idle
        self.at = time.monotonic()
    def made(self):
        self.at = time.monotonic()
    def left(self):
        return self.at + self.idle - time.monotonic()

def own_acquire(zk, prefix, planted, progress):
    """The lock recipe of ZooKeeper's recipes document, on kazoo's plain operations."""
    retry = KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5)
    try:
        node = zk.create(LOCK + "/" + prefix, b"", ephemeral=True, sequence=True, makepath=True)
    except ConnectionLoss:
        if planted:
            return None  # PLANTED: the create may have landed; taken as the lock unlooked
        node = None
        while node is None:
            # The server this session is on now may be a follower yet to apply the create:
            # without the sync it can miss the node, and the node left behind blocks the lock.
            retry(zk.sync, LOCK)
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
        if progress.left() <= 0:
            raise TimeoutError()

def let_go(zk, lock, recipe, node):
    """Lets go: of kazoo's recipe, or of the node `own` took (none: nothing to delete)."""
    if recipe in ("kazoo", "semaphore"):
        lock.release()
    elif node is not None:
        KazooRetry(max_tries=-1, delay=0.05)(zk.delete, node)

def client(args, number, progress, stats):
    zk = KazooClient(hosts=args.hosts, timeout=args.timeout,
                     connection_retry=KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5))
    claims = Claims(args.claims)
    holding = threading.Event()
    held = {"session": 0}  # the session the claim was made in: a lost one's id reads as 0
    def on_state(state):
        if holding.is_set() and state in (KazooState.SUSPENDED, KazooState.LOST):
            args = (held["session"], state.lower())
            threading.Thread(target=claims.tell, args=args).start()
    zk.add_listener(on_state)
    zk.start()
    rounds = 0
    identifier = f"client-{number}"
    lock = {"semaphore": lambda: zk.Semaphore(SEMAPHORE, identifier, max_leases=LEASES),
            "election": lambda: zk.Election(ELECTION, identifier)}.get(
        args.recipe, lambda: zk.Lock(LOCK, identifier))()
    role, grant = {"semaphore": (SEMAPHORE, "shared"), "election": (ELECTION, "granted")}.get(
        args.recipe, (LOCK, "granted"))

    def hold(session):
        """What the application does while it holds: tells the claims port, briefly."""
        held["session"] = session
        holding.set()
        claims.tell(session, f"{grant} {role}")
        time.sleep(0.02)
        claims.tell(session, f"released {role}")
        holding.clear()

    done = threading.Event()
    if args.recipe == "election":
        # `run` waits for leadership with no bound: a stalled run cancels the candidacy.
        def cancel_when_stalled():
            while not done.wait(0.2):
                if progress.left() <= 0:
                    lock.cancel()
                    return
        threading.Thread(target=cancel_when_stalled, daemon=True).start()
    while rounds < args.rounds and progress.left() > 0:
        prefix = uuid.uuid4().hex + "-lock-"
        node, started = None, session_of(zk)
        try:
            if args.recipe == "election":
                # Leading is the function's call; it ends when the function returns.
                led = []
                lock.run(lambda: led.append(hold(session_of(zk) or started)))
                if not led:
                    break  # cancelled
            else:
                if args.recipe == "own":
                    node = own_acquire(zk, prefix, args.planted, progress)
                elif not lock.acquire(timeout=max(0.1, progress.left())):
                    continue
                # Read while the client reconnects (after the planted lock's lost reply), it is
                # 0; read at the start of a round the client began reconnecting, too.
                hold(session_of(zk) or started)
                let_go(zk, lock, args.recipe, node)
            rounds += 1
            progress.made()
        except (TimeoutError, LockTimeout):
            break
        except (KazooException, RuntimeError) as error:
            holding.clear()
            stats.append(type(error).__name__)
            try:
                let_go(zk, lock, args.recipe, node)  # a node left behind would block the lock
            except KazooException:
                pass
            time.sleep(0.1)
    done.set()
    stats.append(f"client {number}: {rounds} rounds")
    zk.stop()
    zk.close()

def main():
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser()
    parser.add_argument("hosts")
    parser.add_argument("claims")
    parser.add_argument("--recipe", choices=["kazoo", "semaphore", "election", "own"],
                        default="kazoo")
    parser.add_argument("--planted", action="store_true")
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--timeout", type=float, default=4.0)
    args = parser.parse_args()
    stats = []
    progress = Progress(args.idle)
    threads = [threading.Thread(target=client, args=(args, n, progress, stats))
               for n in range(args.clients)]
    for t in threads: t.start()
    for t in threads: t.join()
    print("\n".join(s for s in stats if s.startswith("client")))

main()
