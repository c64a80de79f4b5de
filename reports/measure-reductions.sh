#!/usr/bin/env bash
# Model-checks every scenario of the catalogue (recipes and known bugs) with 2 clients and one of
# each fault three times: with no reduction, with symmetry alone, and with every reduction sound
# for it; keeps each run's JSON in reports/reductions/ and writes reports/reductions.md, which says
# for each scenario whether the three give the same verdicts. (tests/kits.rs compares them on
# smaller cases: no fault, and one fault of each kind alone.)
# Usage: bash reports/measure-reductions.sh           (check, then write the table)
#        bash reports/measure-reductions.sh --table   (rewrite the table from the kept files only)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != --table ]; then
  if [ $# -gt 0 ]; then
    echo "usage: bash reports/measure-reductions.sh [--table]" >&2
    exit 2
  fi
  cargo build --release --quiet
  mkdir -p reports/reductions
  for scenario in $(./target/release/zklab list | awk '{print $1}'); do
    # Each run: the reductions' name, then the flags that leave out the others.
    for run in "none --no-symmetry --no-partial-order --keep-zxids" \
      "symmetry --no-partial-order --keep-zxids" "all"; do
      read -r reductions flags <<< "$run"
      echo "check $scenario, reductions: $reductions" >&2
      # Exit status 1 is a property that fails, which a known bug must: only a usage error (2)
      # or an incomplete search (3) stops the script.
      status=0
      # shellcheck disable=SC2086
      ./target/release/zklab check "$scenario" --clients 2 --faults all --threads 1 --json \
        $flags > "reports/reductions/$scenario-$reductions.json" || status=$?
      if [ "$status" -gt 1 ]; then
        echo "check $scenario ($reductions) ended with status $status" >&2
        exit 1
      fi
    done
  done
fi
python3 - <<'PY' > reports/reductions.md
import json, os, subprocess
order = subprocess.run(["./target/release/zklab", "list"], capture_output=True, text=True, check=True).stdout
names = [line.split()[0] for line in order.splitlines() if line.strip()]
cores = os.cpu_count()
date = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
print("# zklab check: the reductions give the verdicts of none")
print()
print(f"Written by `reports/measure-reductions.sh` from the files in reports/reductions/ ({cores} cores,")
print(f"{date}), release build. `zklab check SCENARIO --clients 2 --faults all --threads 1`: one of each")
print("fault (connection loss, lost reply, session expiry, pause), with no reduction (`--no-symmetry")
print("--no-partial-order --keep-zxids`), with symmetry alone (`--no-partial-order --keep-zxids`), and")
print("with every reduction sound for the scenario (no flag). For a recipe, the count with every")
print("reduction is the one its catalogue entry pins (a known bug pins the count of the smaller model")
print("its `KnownBug` names, so a bug that needs more clients or other faults may hold here). Symmetry")
print("is off for a machine that is not symmetric, so there its column repeats the first.")
print()
print("| scenario | unique states, none | symmetry | every reduction | same verdicts | properties that fail |")
print("| --- | --- | --- | --- | --- | --- |")
disagree = 0
for name in names:
    runs = [json.load(open(f"reports/reductions/{name}-{r}.json")) for r in ("none", "symmetry", "all")]
    verdicts = [[(p["name"], p["holds"]) for p in run["properties"]] for run in runs]
    same = all(v == verdicts[0] for v in verdicts) and all(run["complete"] for run in runs)
    disagree += not same
    failing = ", ".join(p for p, holds in verdicts[0] if not holds) or "none"
    counts = " | ".join(f"{run['unique_states']:,}" for run in runs)
    print(f"| {name} | {counts} | {'yes' if same else '**no**'} | {failing} |")
print()
print(f"Scenarios whose verdicts differ between the reductions: {disagree} of {len(names)}.")
PY
echo "wrote reports/reductions.md" >&2
