#!/usr/bin/env bash
# Runs the lock sweep of the acceptance criteria (10,000 seeds, all faults) and the two known-bug
# scenarios (1,000 seeds), keeps each run's JSON, and writes reports/sweep.md from them.
# Usage: bash reports/measure-sweep.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/sweep
./target/release/zklab run lock --seeds 10000 --faults all --json > reports/sweep/lock.json
for bug in lock-bug-blind-retry lock-bug-herd; do
  ./target/release/zklab run "$bug" --seeds 1000 --faults all --json > "reports/sweep/$bug.json"
done
{
  echo "# zklab run: seeded sweeps"
  echo
  echo "Written by \`reports/measure-sweep.sh\` from the JSON beside it ($(nproc) cores, $(date -u +%Y-%m-%d)), release build."
  echo
  echo "| scenario | seeds | failing | seeds/s | max wake-ups per deletion | connection loss | lost reply | lost create reply | session expiry | reorder | partition | pause | crash |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for f in reports/sweep/lock.json reports/sweep/lock-bug-blind-retry.json reports/sweep/lock-bug-herd.json; do
    python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["faults_injected"]
kinds = ["connection_loss", "lost_reply", "lost_create_reply", "session_expiry", "reorder", "partition", "pause", "crash"]
print(f'| {d["scenario"]} | {d["seeds"]} | {len(d["failures"])} | {d["seeds_per_sec"]:.0f} | {d["max_wakeups_per_deletion"]} | ' + " | ".join(str(f[k]) for k in kinds) + " |")
PY
  done
  echo
  echo "First failure of each known bug:"
  echo
  for f in reports/sweep/lock-bug-blind-retry.json reports/sweep/lock-bug-herd.json; do
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); x=d['failures'][0]; print(f'- {d[\"scenario\"]}, seed {x[\"seed\"]}: {x[\"violation\"]}  \n  replay: \`{x[\"replay\"]}\`')" "$f"
  done
} > reports/sweep.md
cat reports/sweep.md
