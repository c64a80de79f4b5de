#!/usr/bin/env bash
# Sweeps every recipe of `zklab list` with all faults over 10,000 seeds on a standalone server
# and on a 3-server ensemble; keeps each run's JSON, and writes reports/ensemble.md: what the
# ensemble costs in seeds/s, and what it finds.
# Usage: bash reports/measure-ensemble.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/ensemble
recipes=$(./target/release/zklab list | grep -v '(known bug' | cut -d' ' -f1)
for servers in 1 3; do
  for recipe in $recipes; do
    ./target/release/zklab run "$recipe" --seeds 10000 --faults all --servers "$servers" --json \
      > "reports/ensemble/$recipe-$servers.json"
  done
done
{
  echo "# zklab run on a standalone server and on a 3-server ensemble"
  echo
  echo "Written by \`reports/measure-ensemble.sh\` from the JSON beside it ($(nproc) cores, $(date -u +%Y-%m-%d)), release build: every recipe, 10,000 seeds, all faults, 5 clients, 10 rounds. On 3 servers (the scenarios' default) \`--faults all\` also draws the follower faults (stale-read, server-crash), which a standalone server cannot have: the cost is the ensemble's and theirs together."
  echo
  echo "| scenario | seeds/s, 1 server | seeds/s, 3 servers | cost | failing, 1 server | failing, 3 servers | first failure on 3 servers |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for recipe in $recipes; do
    python3 - "reports/ensemble/$recipe-1.json" "reports/ensemble/$recipe-3.json" <<'PY'
import json, sys
one, three = (json.load(open(path)) for path in sys.argv[1:3])
cost = 1 - three["seeds_per_sec"] / one["seeds_per_sec"]
first = three["failures"][0]["violation"] if three["failures"] else ""
print(f'| {one["scenario"]} | {one["seeds_per_sec"]:.0f} | {three["seeds_per_sec"]:.0f} | {cost:+.0%} | '
      f'{len(one["failures"])} | {len(three["failures"])} | {first} |')
PY
  done
} > reports/ensemble.md
cat reports/ensemble.md
