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
source tests/shell/standalone.sh
serving_pid=""
stop_serve() {
  if [[ -n "$serving_pid" ]]; then
    kill "$serving_pid" 2>/dev/null || true
    wait "$serving_pid" 2>/dev/null || true
    serving_pid=""
  fi
}
trap 'stop_serve; cleanup' EXIT
for run in 1 2 3 4 5; do
  rm -f "$work/serve.out"
  ./target/release/zklab serve --port 0 > "$work/serve.out" &
  serving_pid=$!
  until [[ -s "$work/serve.out" ]]; do sleep 0.1; done
  python3 reports/serve/latency.py "$(head -1 "$work/serve.out")" > "reports/serve/serve-$run.json"
  stop_serve
  start_server
  python3 reports/serve/latency.py "127.0.0.1:$port" > "reports/serve/real-$run.json"
  stop_server
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
