# A fresh standalone ZooKeeper 3.8 on a free loopback port, for the scripts that compare with
# one (tests/shell/record.sh, reports/measure-serve.sh). Source it; it sets a trap that stops the
# server and removes its directory on exit, and gives:
#   start_server   starts a fresh server (extended types on, as zklab's launcher has them) and
#                  sets $port; exits the script when none starts
#   stop_server    stops it
# JAVA_LIBS (default /usr/share/java) holds the server's jars.

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
