#!/usr/bin/env bash
# How `zklab serve` judges lock clients it does not run: src/wild/kazoo_clients.py (3 Python
# clients on kazoo, 6 rounds each) against its claims port, under seeded server-side faults.
# Rows: kazoo's Lock and a lock of the recipes document on kazoo's plain calls, under lost
# replies, lost connections, reordering and expiries (both must hold); the same lock with a
# planted mistake (a create whose reply was lost taken as the lock) under lost create replies
# (it must be caught); each of the first three caught runs' schedule.txt struck again; and both
# locks on a 3-server ensemble under its faults (both must hold and finish every round).
# Writes reports/serve-claims.md; every run's verdict is kept under reports/serve-claims/.
# Needs kazoo (pip install kazoo). Usage: bash reports/measure-serve-claims.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
cargo build --release --quiet
out=reports/serve-claims
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
faults=lost-create-reply=0.15,lost-reply=0.05,connection-loss=0.05,reorder=0.1,session-expiry=0.2
ensemble=lost-create-reply=0.15,stale-read=0.3,server-crash=0.2,leader-change=0.1
# judge NAME CLIENT-ARGS -- SERVE-ARGS...: one judged run; its verdict goes to $out/NAME.txt.
judge() {
  local name=$1 clients=$2 idle=5
  shift 2
  # A follower may stand still for up to 8 s: on an ensemble the clients wait longer for a round.
  [[ $name == ensemble-* ]] && idle=12
  ./target/release/zklab serve --port 0 --claims-port 0 --idle 1 --out "$work/$name" "$@" \
    > "$out/$name.txt" &
  local pid=$!
  until grep -q "^claims port" "$out/$name.txt" 2>/dev/null; do sleep 0.1; done
  local hosts claims
  hosts=$(head -1 "$out/$name.txt")
  claims=$(grep "^claims port" "$out/$name.txt" | cut -d' ' -f3)
  # shellcheck disable=SC2086
  python3 src/wild/kazoo_clients.py "$hosts" "$claims" $clients --clients 3 --rounds 6 \
    --idle "$idle" > /dev/null 2>&1
  wait "$pid" || true
  cp "$work/$name/schedule.txt" "$out/$name.schedule.txt"
}
caught() { grep -c "^VIOLATION" "$out/$1.txt" || true; }
# claims NAME: how many claims the run's clients made (36 when all 3 took the lock 6 times).
claims() { sed -n 's/^zklab serve ended: .* \([0-9]*\) claims.*/\1/p' "$out/$1.txt"; }
# row LABEL PREFIX: runs, violations, runs with every round, and the faults struck over them.
row() {
  local label=$1 prefix=$2 violating=0 total=0 finished=0 struck name
  for file in "$out/$prefix"-*.txt; do
    [[ $file == *.schedule.txt ]] && continue
    name=$(basename "$file" .txt)
    total=$((total + 1))
    [[ $(caught "$name") -gt 0 ]] && violating=$((violating + 1))
    [[ $(claims "$name") -ge 36 ]] && finished=$((finished + 1))
  done
  struck=$(grep -h "^faults struck" "$out/$prefix"-*.txt | cut -d: -f2 | tr ',' '\n' |
    awk '{n[$1] += $2} END {for (k in n) printf "%s %d, ", k, n[k]}' | sed 's/, $//')
  echo "| $label | $total | $violating | $finished | $struck |"
}
for seed in $(seq 1 "$runs"); do
  judge "kazoo-$seed" "--recipe kazoo" --faults "$faults" --seed "$seed"
  judge "own-$seed" "--recipe own" --faults "$faults" --seed "$seed"
  judge "planted-$seed" "--recipe own --planted" --faults lost-create-reply=0.15 --seed "$seed"
  judge "ensemble-kazoo-$seed" "--recipe kazoo" --servers 3 --faults "$ensemble" --seed "$seed"
  judge "ensemble-own-$seed" "--recipe own" --servers 3 --faults "$ensemble" --seed "$seed"
done
replayed=0
for seed in $(seq 1 "$runs"); do
  [[ $(caught "planted-$seed") -gt 0 ]] || continue
  for again in 1 2 3 4 5; do
    judge "replay-$seed.$again" "--recipe own --planted" --script "$out/planted-$seed.schedule.txt"
  done
  replayed=$((replayed + 1))
  [[ $replayed -ge 3 ]] && break
done
{
  echo "# zklab serve judging lock clients it does not run"
  echo
  echo "Written by \`bash reports/measure-serve-claims.sh $runs\` on $(date -u +%Y-%m-%d)."
  echo "Each run: \`zklab serve --claims-port\` with the faults below, 3 Python clients of"
  echo "\`src/wild/kazoo_clients.py\` taking the lock 6 times each (or stopping once none has for 5 s),"
  echo "each claim answered before the client goes on; the mutual-exclusion monitor judges the"
  echo "claims. Faults for the first two rows: \`$faults\`; for the planted lock:"
  echo "\`lost-create-reply=0.15\`; a replay strikes the schedule its caught run wrote, and"
  echo "nothing else. The last two rows: \`zklab serve --servers 3 --faults $ensemble\`, the"
  echo "clients waiting up to 12 s for a round (a follower may stand still for 8 s). Seeds 1 to"
  echo "$runs. (A lost create reply counts as a lost reply too.)"
  echo
  echo "| clients | runs | runs with a violation | runs with every round | faults struck over the runs |"
  echo "| --- | --- | --- | --- | --- |"
  row "kazoo's Lock (must hold)" kazoo
  row "the recipes document's lock on kazoo's calls (must hold)" own
  row "that lock taking a lost create reply as the lock (must be caught)" planted
  row "its schedules struck again, 5 times each (must be caught)" replay
  row "kazoo's Lock on 3 servers (must hold and finish)" ensemble-kazoo
  row "the recipes document's lock on 3 servers (must hold and finish)" ensemble-own
} > reports/serve-claims.md
cat reports/serve-claims.md
