#!/usr/bin/env bash
# Checks every known bug's model in the small model the catalogue names for it (`zklab list
# --json`: clients, fault budget), forces the failing property's counterexample on the
# recipe's code in the simulator (the command `zklab check` prints), and writes
# reports/counterexamples.md: the steps of each path, whether the forced run took them all,
# and what the simulator showed.
# Usage: bash reports/measure-counterexamples.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
zklab=$PWD/target/release/zklab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# bug, clients, faults, property: each known bug's model, as the catalogue names it.
models=$("$zklab" list --json | jq -r '.[] | select(.known_bug and (.known_bug.beyond_the_model | not))
  | .known_bug as $bug
  | ($bug.faults | to_entries | map(select(.value > 0))) as $faults
  | if any($faults[]; .value > 1) then error("\(.name): a budget of more than one fault of a kind") else . end
  | [.name, $bug.clients,
     (if ($faults | length) == 0 then "none" elif ($faults | length) == 4 then "all"
      else $faults | map(.key | gsub("_"; "-")) | join(",") end),
     ($bug.breaks | gsub(" "; "-"))]
  | join(" ")') || exit 1
# Known bugs that need what the model lacks (a lagging follower, watches lost with the
# connection): the model holds for them.
beyond=$("$zklab" list --json | jq -r '[.[] | select(.known_bug.beyond_the_model) | "`\(.name)`"] | join(", ")')
{
  echo "# Model counterexamples forced on the recipes' code"
  echo
  echo "Written by \`reports/measure-counterexamples.sh\` ($(nproc) cores, $(date -u +%Y-%m-%d)), release build. For each known bug, \`zklab check <bug> --clients N --faults F\` in the small model the catalogue names for it (\`zklab list --json\`); the failing property's counterexample, written as a schedule, is forced step by step on the recipe's own code in the simulator with the command \`check\` prints (\`zklab replay --script FILE\`). *Steps* counts the path's steps (the server's and the clients'); *path* says whether the forced run took every one; *simulator* is its first violation. Not here, since they need what the model lacks (a lagging follower, watches lost with a broken connection), so their models hold: $beyond."
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
