#!/usr/bin/env bash
# Sweeps every recipe of `zklab list` over 10,000 seeds on a standalone server with all faults,
# on a 3-server ensemble with the same faults, and on a 3-server ensemble with all faults (the
# ensemble's own kinds too); keeps each run's JSON, and writes reports/ensemble.md: what the
# ensemble costs in seeds/s, what its faults cost, and what they find.
# Usage: bash reports/measure-ensemble.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/ensemble
recipes=$(./target/release/zklab list | grep -v '(known bug' | cut -d' ' -f1)
standalone_faults="all,stale-read=0,server-crash=0,leader-change=0"
for recipe in $recipes; do
  run() { ./target/release/zklab run "$recipe" --seeds 10000 --json "$@"; }
  run --servers 1 --faults all > "reports/ensemble/$recipe-1.json"
  run --servers 3 --faults "$standalone_faults" > "reports/ensemble/$recipe-3-same.json"
  run --servers 3 --faults all > "reports/ensemble/$recipe-3.json"
done
{
  echo "# zklab run on a standalone server and on a 3-server ensemble"
  echo
  echo "Written by \`reports/measure-ensemble.sh\` from the JSON beside it ($(nproc) cores, $(date -u +%Y-%m-%d)), release build: every recipe, 10,000 seeds, 5 clients, 10 rounds."
  echo
  echo "- **1 server**: \`--servers 1 --faults all\` (a standalone server cannot have the ensemble's kinds)."
  echo "- **3 servers, same faults**: \`--servers 3 --faults $standalone_faults\`: the ensemble's cost alone (followers that replay every write, reads parked until a follower has applied what its client has seen, sessions spread over three servers)."
  echo "- **3 servers, all faults**: \`--servers 3 --faults all\`, the scenarios' default: the ensemble's kinds (stale-read, server-crash, leader-change) too. These lengthen a seed in sim time (an election stops writes; a client whose server died reconnects), and every kind of fault is drawn per second of sim time, so such a seed also takes more of the others."
  echo
  echo "| scenario | seeds/s, 1 server | seeds/s, 3 servers, same faults | ensemble's cost | seeds/s, 3 servers, all faults | cost with its faults | failing (1 / 3 same / 3 all) | first failure |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  for recipe in $recipes; do
    python3 - "reports/ensemble/$recipe-1.json" "reports/ensemble/$recipe-3-same.json" "reports/ensemble/$recipe-3.json" <<'PY'
import json, sys
one, same, three = (json.load(open(path)) for path in sys.argv[1:4])
rate = lambda run: run["seeds_per_sec"]
failures = [run["failures"] for run in (one, same, three)]
first = next((f[0]["violation"] for f in failures if f), "")
print(f'| {one["scenario"]} | {rate(one):.0f} | {rate(same):.0f} | {1 - rate(same) / rate(one):+.0%} | '
      f'{rate(three):.0f} | {1 - rate(three) / rate(one):+.0%} | '
      f'{" / ".join(str(len(f)) for f in failures)} | {first} |')
PY
  done
} > reports/ensemble.md
cat reports/ensemble.md
