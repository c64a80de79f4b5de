#!/usr/bin/env bash
# Checks every known bug's model in the small model tests/kits.rs names for it (clients, fault
# budget), forces the failing property's counterexample on the recipe's code in the simulator
# (the command `zklab check` prints), and writes reports/counterexamples.md: the steps of each
# path, whether the forced run took them all, and what the simulator showed.
# Usage: bash reports/measure-counterexamples.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
zklab=$PWD/target/release/zklab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# bug, clients, faults, property: as tests/kits.rs has them.
models="
lock-bug-blind-retry 2 all no-stuck-state
lock-bug-give-up 2 lost-reply no-stuck-state
lock-bug-lost-wakeup 3 none no-stuck-state
lock-bug-herd 3 none herd-freedom
lock-bug-sort-by-name 2 none mutual-exclusion
election-bug-trust-deletion 3 session-expiry mutual-exclusion
election-bug-herd 3 none herd-freedom
rw-lock-bug-serial-readers 3 none no-waiter-held-back
rw-lock-bug-writer-ignores-readers 2 none mutual-exclusion
rw-lock-bug-herd 3 none herd-freedom
revocable-lock-bug-ignores-unlock 2 none revocation-heeded
semaphore-bug-list-first 3 none mutual-exclusion
semaphore-bug-lost-wakeup 3 none no-stuck-state
barrier-bug-trust-any-event 2 session-expiry barrier-safety
double-barrier-bug-blind-retry 2 lost-reply double-barrier-enter
double-barrier-bug-trust-deletion 3 none double-barrier-leave
double-barrier-bug-herd 3 none herd-freedom
two-phase-commit-bug-presume-commit 2 lost-reply agreement
queue-bug-delete-mine 3 connection-loss nothing-twice
queue-bug-delete-not-mine 2 lost-reply nothing-lost
locked-queue-bug-persistent-claim 2 session-expiry no-claim-outlives-its-session
queue-bug-put-blindly 2 lost-reply nothing-twice
config-bug-no-reread 2 none no-stuck-state
group-bug-no-reread 2 none no-stuck-state
group-bug-persistent-member 2 session-expiry no-view-holds-a-dead-member
names-bug-create-only 2 connection-loss a-name-resolves-to-its-latest-registration
queue-bug-name-order 2 none sequence-order
priority-queue-bug-stale-listing 2 none priority-order
"
{
  echo "# Model counterexamples forced on the recipes' code"
  echo
  echo "Written by \`reports/measure-counterexamples.sh\` ($(nproc) cores, $(date -u +%Y-%m-%d)), release build. For each known bug, \`zklab check <bug> --clients N --faults F\` in the small model tests/kits.rs names for it; the failing property's counterexample, written as a schedule, is forced step by step on the recipe's own code in the simulator with the command \`check\` prints (\`zklab replay --script FILE\`). *Steps* counts the path's steps (the server's and the clients'); *path* says whether the forced run took every one; *simulator* is its first violation. \`names-bug-no-sync\` is not here: it needs a lagging follower, which the one-server model has not, so its model holds."
  echo
  echo "| known bug | clients | faults | property | steps | path | simulator | exit |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  echo "$models" | while read -r bug clients faults property; do
    [ -n "$bug" ] || continue
    dir="$work/$bug"
    mkdir -p "$dir"
    (cd "$dir" && "$zklab" check "$bug" --clients "$clients" --faults "$faults" > check.txt)
    schedule="$dir/zklab-counterexamples/$bug-${clients}c-$property.schedule"
    steps=$(grep -c '^step ' "$schedule")
    "$zklab" replay --script "$schedule" > "$dir/replay.txt"
    status=$?
    shown=$(grep -o -- '-- VIOLATION [a-z-]*' "$dir/replay.txt" | head -1 | cut -d' ' -f3)
    if grep -q 'the forced order is done' "$dir/replay.txt"; then path="all taken"; else path="left"; fi
    echo "| $bug | $clients | $faults | ${property//-/ } | $steps | $path | ${shown:-none} | $status |"
  done
} > reports/counterexamples.md
cat reports/counterexamples.md
