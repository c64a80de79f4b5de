#!/usr/bin/env bash
# Model-checks every recipe (each scenario that is no known bug) with 2 and 3 clients and one of
# each fault, every reduction sound for it, one checker thread per core; keeps each run's JSON
# and peak resident memory in reports/checks/ and writes the table reports/checks.md from them.
# Usage: bash reports/measure-checks.sh [timeout seconds per run, default 120]
#        bash reports/measure-checks.sh --table    (rewrite the table from the kept files only)
set -uo pipefail
cd "$(dirname "$0")/.."
limit=${1:-120}
if [ "$limit" != --table ]; then
  if ! [[ "$limit" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: bash reports/measure-checks.sh [timeout seconds per run] | --table" >&2
    exit 2
  fi
  cargo build --release --quiet || exit 1
  mkdir -p reports/checks
  recipes=$(./target/release/zklab list | grep -v '(known bug' | awk '{print $1}')
  for recipe in $recipes; do
    for clients in 2 3; do
      out=reports/checks/$recipe-$clients
      echo "check $recipe --clients $clients" >&2
      /usr/bin/time -f '%M' -o "$out.kib" ./target/release/zklab check "$recipe" \
        --clients "$clients" --faults all --timeout "$limit" --json > "$out.json"
      echo "$limit" > "$out.timeout"
    done
  done
fi
python3 - <<'PY' > reports/checks.md
import glob, json, os, subprocess
rows = []
for path in sorted(glob.glob("reports/checks/*.json")):
    stem = path[:-len(".json")]
    run = json.load(open(path))
    kib = int(open(stem + ".kib").read().split()[-1])
    timeout = int(open(stem + ".timeout").read())
    rows.append((run, kib, timeout))
order = subprocess.run(["./target/release/zklab", "list"], capture_output=True, text=True).stdout
names = [line.split()[0] for line in order.splitlines() if line.strip()]
rows.sort(key=lambda r: (names.index(r[0]["model"]) if r[0]["model"] in names else len(names), r[0]["clients"]))
cores = os.cpu_count()
date = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
print("# zklab check: every recipe")
print()
print(f"Written by `reports/measure-checks.sh` from the files in reports/checks/ ({cores} cores, {date}),")
print("release build. `zklab check RECIPE --clients N --faults all`: one of each fault (connection loss,")
print("lost reply, session expiry, pause), every reduction sound for the recipe, one checker thread per")
print("core. A run stopped at its timeout is incomplete: its properties are unrefuted, not proven.")
print()
print("| recipe | clients | states | unique states | max depth | seconds | peak memory | complete | every property holds |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for run, kib, timeout in rows:
    holds = all(p["holds"] for p in run["properties"])
    verdict = ("yes" if holds else "no: " + ", ".join(p["name"] for p in run["properties"] if not p["holds"]))
    if not run["complete"] and holds:
        verdict = "unrefuted"
    complete = "yes" if run["complete"] else f"no (timeout {timeout} s)"
    print(f"| {run['model']} | {run['clients']} | {run['states']:,} | {run['unique_states']:,} | {run['max_depth']} "
          f"| {run['seconds']:.1f} | {kib // 1024:,} MiB | {complete} | {verdict} |")
PY
