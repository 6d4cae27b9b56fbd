# Sourced by tools/opensearch.sh and tools/elasticsearch.sh: starting one search node from Maven
# Central and stopping it, the same for both. The caller is in its .ci/<name> folder and sets
#   name      for messages (`opensearch`)
#   url       where the node answers
#   home      the node's data folder, wiped before a start
#   pidfile   where the node's process id is kept
#   launch    a function that starts the node in the background, its output in target/$name.log
# then calls `search_node start|stop`.

healthy() { curl -fs -m 5 "$url/_cluster/health?wait_for_status=yellow&timeout=5s" >/dev/null 2>&1; }
# Every test makes its own indices and the suite runs several times against one node: the default
# of 1,000 shards per node would run out before the end. The disk watermarks guard a production
# node's disk; here the node shares the machine's disk with everything else the suite writes, and
# past the flood stage it would make every index read-only.
roomy() {
  curl -fs -m 10 -X PUT "$url/_cluster/settings" -H 'content-type: application/json' \
    -d '{"persistent":{"cluster.max_shards_per_node":20000,
      "cluster.routing.allocation.disk.threshold_enabled":false}}' >/dev/null
}

search_node() {
  case "${1:-start}" in
  start)
    mkdir -p target
    # Two starts at once (two test runs, two shells) would each wipe the data folder under the
    # other's node: the second waits for the first, then finds the node up. The node does not
    # inherit the lock (launch closes 9), or no later start could take it while the node runs.
    exec 9>target/start.lock
    flock 9
    if healthy; then roomy; echo "$name: already up at $url"; exit 0; fi
    # The runner's own Maven classpath; exec:java does not work (the node closes at once under it).
    mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
    rm -rf "$home"
    launch 9>&-
    echo $! >"$pidfile"
    for _ in $(seq 1 600); do
      if healthy; then roomy; echo "$name: up at $url"; exit 0; fi
      if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then break; fi
      sleep 1
    done
    echo "$name: did not start; the last lines of its logs:" >&2
    tail -n 40 "target/$name.log" "$home"/node_1/logs/*.log 2>/dev/null >&2 || true
    exit 1
    ;;
  stop)
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
    ;;
  *) echo "usage: tools/$name.sh [start|stop]" >&2; exit 2 ;;
  esac
}
