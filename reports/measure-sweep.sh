#!/usr/bin/env bash
# Sweeps every scenario of `zklab list` with all faults: each recipe over 10,000 seeds, each known
# bug over 1,000; keeps each run's JSON, and writes reports/sweep.md from them.
# Usage: bash reports/measure-sweep.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/sweep
recipes=$(./target/release/zklab list | grep -v '(known bug' | cut -d' ' -f1)
bugs=$(./target/release/zklab list | grep '(known bug' | cut -d' ' -f1)
for recipe in $recipes; do
  ./target/release/zklab run "$recipe" --seeds 10000 --faults all --json > "reports/sweep/$recipe.json"
done
for bug in $bugs; do
  ./target/release/zklab run "$bug" --seeds 1000 --faults all --json > "reports/sweep/$bug.json"
done
{
  echo "# zklab run: seeded sweeps"
  echo
  echo "Written by \`reports/measure-sweep.sh\` from the JSON beside it ($(nproc) cores, $(date -u +%Y-%m-%d)), release build."
  echo
  echo "| scenario | seeds | failing | seeds/s | max wake-ups per deletion | connection loss | lost reply | lost create reply | session expiry | reorder | partition | pause | crash | stale read | server crash | leader change |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for f in $(for s in $recipes $bugs; do echo "reports/sweep/$s.json"; done); do
    python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["faults_injected"]
kinds = ["connection_loss", "lost_reply", "lost_create_reply", "session_expiry", "reorder", "partition", "pause", "crash", "stale_read", "server_crash", "leader_change"]
print(f'| {d["scenario"]} | {d["seeds"]} | {len(d["failures"])} | {d["seeds_per_sec"]:.0f} | {d["max_wakeups_per_deletion"]} | ' + " | ".join(str(f[k]) for k in kinds) + " |")
PY
  done
  echo
  echo "Seeds each kind struck at least once (\`seeds_struck\`), as a share of the seeds: under \`--faults all\` a run"
  echo "lasts a few seconds of sim time, so the kinds rated per second strike few seeds; \`--faults all,kind=rate\` raises one."
  echo
  echo "| scenario | connection loss | lost reply | lost create reply | session expiry | reorder | partition | pause | crash | stale read | server crash | leader change |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for f in $(for s in $recipes; do echo "reports/sweep/$s.json"; done); do
    python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["seeds_struck"]
kinds = ["connection_loss", "lost_reply", "lost_create_reply", "session_expiry", "reorder", "partition", "pause", "crash", "stale_read", "server_crash", "leader_change"]
print(f'| {d["scenario"]} | ' + " | ".join(f'{100 * s[k] / d["seeds"]:.1f}%' for k in kinds) + " |")
PY
  done
  echo
  echo "First failure of each known bug:"
  echo
  for f in $(for s in $bugs; do echo "reports/sweep/$s.json"; done); do
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); x=d['failures'][0]; print(f'- {d[\"scenario\"]}, seed {x[\"seed\"]}: {x[\"violation\"]}  \n  replay: \`{x[\"replay\"]}\`')" "$f"
  done
} > reports/sweep.md
cat reports/sweep.md
