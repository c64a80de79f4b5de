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
libs="${JAVA_LIBS:-/usr/share/java}"
jars=(zookeeper zookeeper-jute slf4j-api slf4j-simple netty-handler netty-transport netty-common
      netty-buffer netty-codec netty-resolver netty-transport-native-epoll
      netty-transport-native-unix-common commons-io commons-cli)
classpath="$(printf "$libs/%s.jar:" "${jars[@]}")"

work="$(mktemp -d)"
server=""
port=""
cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT

stop_server() {
    if [[ -n "$server" ]]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=""
    fi
}

# Whether something listens on $port.
listened() {
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

# Whether our server serves: `srvr` reports its mode only then (`ruok` answers earlier), and a
# server that lost the port to another exits.
serving() {
    kill -0 "$server" 2>/dev/null &&
        timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && echo srvr >&3 && cat <&3' _ "$port" \
            2>/dev/null | grep -q '^Mode: standalone'
}

# Starts a fresh standalone server and sets $port. Ports are tried below Linux's ephemeral
# range, where outgoing connections take ports that nothing listens on; a port something listens
# on, or that the server fails to bind, is replaced by another.
start_server() {
    for _ in $(seq 5); do
        port=$((20000 + RANDOM % 12000))
        if listened; then
            continue
        fi
        rm -rf "$work/data"
        mkdir -p "$work/data"
        printf '%s\n' "tickTime=2000" "dataDir=$work/data" "clientPort=$port" \
            "clientPortAddress=127.0.0.1" "admin.enableServer=false" \
            "4lw.commands.whitelist=*" > "$work/zoo.cfg"
        # Extended types on, as zklab's launcher has them, for TTL nodes.
        java -Xmx256m -Dzookeeper.extendedTypesEnabled=true -cp "$classpath" \
            org.apache.zookeeper.server.ZooKeeperServerMain \
            "$work/zoo.cfg" > "$work/server.log" 2>&1 &
        server=$!
        for _ in $(seq 100); do
            if serving; then
                return
            fi
            if ! kill -0 "$server" 2>/dev/null; then
                break
            fi
            sleep 0.1
        done
        stop_server
    done
    cat "$work/server.log" >&2
    echo "record.sh: no server started" >&2
    exit 1
}

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
