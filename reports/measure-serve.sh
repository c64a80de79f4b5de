#!/usr/bin/env bash
# Latency and rate of `zklab serve` beside a real standalone ZooKeeper 3.8 on loopback, as one
# kazoo client sees them (sequential getData and setData of one node: reports/serve/latency.py),
# five runs each on a fresh server; keeps each run's JSON and writes reports/serve.md.
# Needs an installed ZooKeeper (apt-get install -y zookeeper) and kazoo (pip install kazoo).
# Usage: bash reports/measure-serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/serve
libs="${JAVA_LIBS:-/usr/share/java}"
jars=(zookeeper zookeeper-jute slf4j-api slf4j-simple netty-handler netty-transport netty-common
      netty-buffer netty-codec netty-resolver netty-transport-native-epoll
      netty-transport-native-unix-common commons-io commons-cli)
classpath="$(printf "$libs/%s.jar:" "${jars[@]}")"
work="$(mktemp -d)"
pid=""
stop() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi
}
trap 'stop; rm -rf "$work"' EXIT
for run in 1 2 3 4 5; do
  rm -f "$work/serve.out"
  ./target/release/zklab serve --port 0 > "$work/serve.out" &
  pid=$!
  until [[ -s "$work/serve.out" ]]; do sleep 0.1; done
  python3 reports/serve/latency.py "$(head -1 "$work/serve.out")" > "reports/serve/serve-$run.json"
  stop
  port=$((20000 + RANDOM % 12000))
  rm -rf "$work/data" && mkdir -p "$work/data"
  printf '%s\n' "tickTime=2000" "dataDir=$work/data" "clientPort=$port" \
    "clientPortAddress=127.0.0.1" "admin.enableServer=false" "4lw.commands.whitelist=*" \
    > "$work/zoo.cfg"
  java -Xmx512m -cp "$classpath" org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" \
    > "$work/server.log" 2>&1 &
  pid=$!
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && \
      timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && echo srvr >&3 && cat <&3' _ "$port" \
      | grep -q '^Mode: standalone'; do sleep 0.2; done
  python3 reports/serve/latency.py "127.0.0.1:$port" > "reports/serve/real-$run.json"
  stop
done
python3 - <<'PY' > reports/serve.md
import json, statistics, subprocess
def runs(name):
    return [json.load(open(f"reports/serve/{name}-{i}.json")) for i in range(1, 6)]
cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
date = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
n, version = runs("serve")[0]["ops"], runs("serve")[0]["kazoo"]
print("# `zklab serve` beside a real ZooKeeper")
print()
print(f"Written by `reports/measure-serve.sh` from the JSON beside it ({cores} cores, {date}), release build,")
print("ZooKeeper 3.8 from Debian's package, both standalone on 127.0.0.1, each run on a fresh server.")
print(f"One kazoo {version} client (Python) sends {n} getData, then {n} setData, of one node, one at a time")
print("after a warm-up: what one client waits, its own overhead included. Medians of five runs.")
print()
print("| server | read p50 | read p99 | reads/s | write p50 | write p99 | writes/s |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, label in [("serve", "zklab serve"), ("real", "ZooKeeper 3.8")]:
    rs = runs(name)
    med = lambda kind, key: statistics.median(r[kind][key] for r in rs)
    print(f"| {label} | {med('read','p50_ms'):.3f} ms | {med('read','p99_ms'):.3f} ms | {med('read','ops_per_s'):.0f} "
          f"| {med('write','p50_ms'):.3f} ms | {med('write','p99_ms'):.3f} ms | {med('write','ops_per_s'):.0f} |")
print()
print("A real server logs each write to disk before it answers (fsync on its transaction log);")
print("`zklab serve` keeps everything in memory.")
PY
echo "wrote reports/serve.md"
