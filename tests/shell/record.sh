#!/usr/bin/env bash
# Records what the real zkCli prints for each zkCli script in tests/shell (NAME.zk -> NAME.out),
# the expected output of `zklab shell` in tests/shell.rs.
#
#   tests/shell/record.sh [NAME.zk ...]      (default: every tests/shell/*.zk)
#
# Each script runs on a fresh standalone ZooKeeper 3.8, so zxids and sequence numbers start from
# scratch, with stdout and stderr merged as a terminal shows them and the clock in UTC.
# `-waitforconnection` makes zkCli print its connect notification before the first command runs.
# zkCli prints watch notifications from another thread, so the script goes in a line at a time,
# as typed, for each notification to be printed before the next command's output. A command
# that both prints and fires a watch (`create` under an `ls -w`) races with the notification all
# the same: the scripts fire watches with `set` and `delete` only.
#
# zkCli's noise is dropped, and nothing else: SLF4J's warnings (lines starting with `SLF4J: `),
# its banner (`Connecting to HOST`, `Welcome to ZooKeeper!`, `JLine support is disabled`) and
# the stack frames under an uncaught exception (lines starting with a tab and `at `).
#
# ZOOKEEPER_HOME (default /usr/share/zookeeper) holds bin/zkCli.sh; JAVA_LIBS (default
# /usr/share/java) holds the server's jars.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
zookeeper_home="${ZOOKEEPER_HOME:-/usr/share/zookeeper}"
source "$here/standalone.sh"

# The lines of a script, one every tenth of a second.
type_slowly() {
    local line
    while IFS= read -r line || [[ -n "$line" ]]; do
        printf '%s\n' "$line"
        sleep 0.1
    done < "$1"
}

if [[ $# -eq 0 ]]; then
    set -- "$here"/*.zk
fi
for script in "$@"; do
    start_server
    # zkCli's exit status is that of its last command: not a failure of the recording.
    type_slowly "$script" | TZ=UTC "$zookeeper_home/bin/zkCli.sh" -waitforconnection \
        -server "127.0.0.1:$port" > "$work/raw" 2>&1 || true
    grep -v -e '^SLF4J: ' -e '^Connecting to ' -e '^Welcome to ZooKeeper!$' \
        -e '^JLine support is disabled$' -e $'^\tat ' "$work/raw" > "${script%.zk}.out" || true
    stop_server
    echo "recorded ${script%.zk}.out"
done
