#!/usr/bin/env bash
# Measures what issue "Speed" asks of the lock, release build, on this machine: the seeded sweep's
# seeds a second, the 3- and 4-client model checks with every fault (seconds, states, peak
# resident memory), and `cargo bench`; writes reports/speed.md.
# Usage: bash reports/measure-speed.sh
set -uo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
zklab=./target/release/zklab
sweep=$($zklab run lock --seeds 10000 --faults all | head -1)
check() {
  /usr/bin/time -f '%M' -o /tmp/zklab-speed-rss "$zklab" check lock --clients "$1" --faults all --timeout 900 | sed -n 2p
  echo "peak resident memory $(( $(cat /tmp/zklab-speed-rss) / 1024 )) MiB"
}
three=$(check 3)
four=$(check 4)
bench=$(cargo bench --quiet --bench speed 2>/dev/null | grep -E '─|speed')
{
  echo "# Speed of the lock"
  echo
  echo "Written by \`reports/measure-speed.sh\` ($(nproc) cores, $(date -u +%Y-%m-%d)), release build."
  echo
  echo "- \`zklab run lock --seeds 10000 --faults all\`: $sweep"
  echo "- \`zklab check lock --clients 3 --faults all\`: $(echo "$three" | tr '\n' ';' | sed 's/;$//; s/;/; /')"
  echo "- \`zklab check lock --clients 4 --faults all\`: $(echo "$four" | tr '\n' ';' | sed 's/;$//; s/;/; /')"
  echo
  echo "\`cargo bench --bench speed\`:"
  echo
  echo '```text'
  echo "$bench"
  echo '```'
} > reports/speed.md
cat reports/speed.md
