#!/usr/bin/env bash
# Times the lock workload (5 clients x 10 acquisitions, no faults) on the simulator and on a real
# standalone ZooKeeper started for each run, keeps each run's JSON, and writes reports/real.md
# with the ratio. Also records the conformance run of the acceptance criteria (500 cases).
# Needs an installed ZooKeeper (apt-get install -y zookeeper).
# Usage: bash reports/measure-real.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/real
# The simulator: wall time per seed over many seeds on one thread, on one server as the real
# one is; five runs, as the real server gets, since one run's seconds swing with the machine.
rm -f reports/real/sim.json
for run in 1 2 3 4 5; do
  ./target/release/zklab run lock --seeds 2000 --faults none --threads 1 --servers 1 --json \
    > "reports/real/sim-$run.json"
done
# The real server: five runs, each on a fresh server.
for run in 1 2 3 4 5; do
  ./target/release/zklab real lock --json > "reports/real/real-$run.json"
done
./target/release/zklab conform --cases 500 --json > reports/real/conform.json
python3 - <<'PY' > reports/real.md
import json, statistics, subprocess
sims = [json.load(open(f"reports/real/sim-{i}.json")) for i in range(1, 6)]
per_seeds = sorted(s["seconds"] / s["seeds"] for s in sims)
per_seed = statistics.median(per_seeds)
real = [json.load(open(f"reports/real/real-{i}.json")) for i in range(1, 6)]
times = sorted(r["seconds"] for r in real)
median = statistics.median(times)
conform = json.load(open("reports/real/conform.json"))
cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
date = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
print("# The simulator and a real ZooKeeper")
print()
print(f"Written by `reports/measure-real.sh` from the JSON beside it ({cores} cores, {date}), release build,")
print("ZooKeeper 3.8 from Debian's package, standalone on 127.0.0.1.")
print()
print("## The lock workload: 5 clients x 10 acquisitions, no faults")
print()
print("| where | wall time per run | runs |")
print("| --- | --- | --- |")
print(f"| simulator (one thread, one server) | {per_seed * 1000:.3f} ms a seed (median; {per_seeds[0] * 1000:.3f} to {per_seeds[-1] * 1000:.3f}) | 5 x {sims[0]['seeds']} seeds, {sum(len(s['failures']) for s in sims)} failing |")
print(f"| real standalone server | {median * 1000:.0f} ms (median; {times[0] * 1000:.0f} to {times[-1] * 1000:.0f}) | 5, violations: {sum(len(r['violations']) for r in real)} |")
print()
print(f"The simulator runs the same workload **{median / per_seed:,.0f} times faster** than the real server (goal: 2,000),")
print("median against median.")
print("Both do the same work: the same recipe and workload code, 1 to 20 ms of work per acquisition")
print("(sim time in the simulator, wall time on the real server); the real run's time excludes the")
print("server's start.")
print()
print("## Differential conformance")
print()
print(f"`zklab conform --cases {conform['cases']}`: {conform['mismatches']} mismatching cases in {conform['seconds']:.1f} s.")
PY
cat reports/real.md
