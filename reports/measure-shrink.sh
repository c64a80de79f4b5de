#!/usr/bin/env bash
# Shrinks every known bug of `zklab list` from its first failing seed (of 500, 5 clients, 10
# rounds, all faults), keeps each `shrink --json` output and shrunk schedule in reports/shrink/,
# and writes reports/shrink.md: the sizes before and after, the runs and the seconds it took.
# Usage: bash reports/measure-shrink.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
mkdir -p reports/shrink
zklab=./target/release/zklab
bugs=$($zklab list | grep '(known bug' | cut -d' ' -f1)
for bug in $bugs; do
  seed=$($zklab run "$bug" --seeds 500 --json --regressions /nonexistent |
    python3 -c "import json, sys; print(json.load(sys.stdin)['failures'][0]['seed'])")
  $zklab shrink "$bug" --seed "$seed" --json --out "reports/shrink/$bug.schedule" > "reports/shrink/$bug.json"
done
{
  echo "# zklab shrink on every known bug"
  echo
  echo "Written by \`reports/measure-shrink.sh\` from the JSON beside it ($(nproc) cores, $(date -u +%Y-%m-%d)), release build. Each known bug is shrunk from its first failing seed of \`zklab run <bug> --seeds 500\` (5 clients, 10 rounds, all faults, 3 servers). *Lines* are the trace lines up to and including the first violation: the story \`replay --script FILE --until-violation\` prints. The shrunk schedules are beside this file; \`zklab replay --script reports/shrink/<bug>.schedule\` replays one."
  echo
  echo "| known bug | seed | violation | faults | clients | rounds | servers | lines | runs | seconds |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for bug in $bugs; do
    python3 - "reports/shrink/$bug.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
o, s = run["original"], run["shrunk"]
pair = lambda key: f'{o[key]} → {s[key]}'
print(f'| {run["scenario"]} | {run["seed"]} | {run["kind"]} | {pair("faults")} | {pair("clients")} | '
      f'{pair("rounds")} | {pair("servers")} | {pair("lines")} | {run["runs"]} | {run["seconds"]:.2f} |')
PY
  done
  python3 - reports/shrink/*.json <<'PY'
import json, sys
runs = [json.load(open(path)) for path in sys.argv[1:]]
worst = lambda key: max(run["shrunk"][key] for run in runs)
print()
print(f'{len(runs)} known bugs: at most {worst("faults")} faults and {worst("lines")} lines after shrinking; '
      f'{sum(run["shrunk"]["faults"] == 0 for run in runs)} shrink to no fault at all (the bug is a race or a plain mistake); '
      f'{sum(run["seconds"] for run in runs):.1f} s in all, the longest {max(run["seconds"] for run in runs):.2f} s.')
PY
} > reports/shrink.md
cat reports/shrink.md
