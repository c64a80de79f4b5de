#!/usr/bin/env bash
# Measures `zklab check lock` for 2, 3 and 4 clients with no reduction, symmetry reduction, and
# symmetry and partial-order reduction, one of each fault, and writes each run's JSON and a
# summary table (reports/models.md) made from them.
# Usage: bash reports/measure-models.sh [timeout seconds per run, default 600]
#        bash reports/measure-models.sh --table    (rewrite the table from the JSON only)
set -uo pipefail
cd "$(dirname "$0")/.."
limit=${1:-600}
[ "$limit" = --table ] && limit=$(python3 -c "import json,glob; print(max(round(json.load(open(f))['seconds']) for f in glob.glob('reports/models/*.json')))")
[ "${1:-}" = --table ] || cargo build --release --quiet
for clients in 2 3 4; do
  [ "${1:-}" = --table ] && break
  for reductions in none symmetry both; do
    case $reductions in
      none) flags="--no-symmetry --no-partial-order" ;;
      symmetry) flags="--no-partial-order" ;;
      both) flags="" ;;
    esac
    out="reports/models/lock-${clients}-reductions-${reductions}.json"
    ./target/release/zklab check lock --clients "$clients" --faults all $flags --timeout "$limit" --json > "$out"
    echo "lock, $clients clients, reductions $reductions: exit $?"
  done
done
{
  echo "# zklab check lock: state space and time"
  echo
  echo "Written by \`reports/measure-models.sh\` from the JSON beside it ($(nproc) cores, $(date -u +%Y-%m-%d))."
  echo "One of each fault (connection loss, lost reply, session expiry, pause); checker threads: one per core."
  echo "An incomplete run stopped at the ${limit} s timeout: its properties are unrefuted, not proven."
  echo
  echo "| clients | symmetry | partial order | states | unique states | max depth | seconds | complete | all properties hold |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for f in reports/models/lock-{2,3,4}-reductions-{none,symmetry,both}.json; do
    python3 - "$f" <<'PY'
import json, sys, re
d = json.load(open(sys.argv[1]))
sym = "on" if d["symmetry"] else "off"
por = "on" if d["partial_order"] else "off"
holds = all(p["holds"] for p in d["properties"])
verdict = "NO" if not holds else ("yes" if d["complete"] else "unrefuted")
print(f'| {d["clients"]} | {sym} | {por} | {d["states"]} | {d["unique_states"]} | {d["max_depth"]} | {d["seconds"]:.1f} | {"yes" if d["complete"] else "no"} | {verdict} |')
PY
  done
} > reports/models.md
cat reports/models.md
