#!/usr/bin/env bash
# Starts a three-node OpenSearch cluster for the tests that hang or kill a node, one JVM per node
# (.ci/opensearch/ClusterNode.java): HTTP on 127.0.0.1:9211-9213, transport on 9311-9313.
#   tools/opensearch_cluster.sh start   start (idempotent) and wait until three nodes are green;
#                                       nodes another checkout started are refused, naming it
#   tools/opensearch_cluster.sh stop    stop the nodes this script started
# Each node's pid is in .ci/opensearch/target/cluster/node-<n>.pid: the tests signal them.
set -euo pipefail
cd "$(dirname "$0")/../.ci/opensearch"
# The physical path: a checkout reached through a symlink is still the one that started its nodes.
dir="$(pwd -P)/target/cluster"
url="http://127.0.0.1:9211"

green() {
  curl -fs -m 10 "$url/_cluster/health?wait_for_status=green&wait_for_nodes=3&timeout=5s" 2>/dev/null |
    grep -q '"number_of_nodes":3'
}
# Whether node n of this checkout runs: its pid file names a live process one of whose arguments
# is this folder's node (a pid reused by another process, or a node of /tmp$dir, does not count).
running() {
  [ -f "$dir/node-$1.pid" ] &&
    tr '\0' '\n' <"/proc/$(cat "$dir/node-$1.pid")/cmdline" 2>/dev/null | grep -qxF "$dir/node-$1"
}
# The folders of the cluster nodes running on this machine that another checkout started.
foreign() {
  pgrep -af 'ClusterNode.java [0-9]' | sed -n 's#.*ClusterNode.java [0-9] \(.*\)/node-[0-9]$#\1#p' |
    grep -vxF "$dir" | sort -u || true
}

case "${1:-start}" in
  start)
    mkdir -p "$dir"
    exec 9>"$dir/start.lock"
    flock 9
    # A node left stopped by a test that died halfway would keep the cluster from answering.
    for n in 1 2 3; do running "$n" && kill -CONT "$(cat "$dir/node-$n.pid")"; done
    if running 1 && running 2 && running 3 && green; then
      echo "opensearch cluster: already up at $url (3 nodes)"
      exit 0
    fi
    # Nodes another checkout started answer on the same ports: the tests would signal pids this
    # folder does not have, so they are not taken over, nor stopped from here.
    others=$(foreign)
    if [ -n "$others" ] || { ! running 1 && ! running 2 && ! running 3 && green; }; then
      echo "opensearch cluster: $url is served by nodes this checkout did not start" \
        "(started from ${others:-a folder not found}); stop them there" \
        "(tools/opensearch_cluster.sh stop in that checkout) and start again" >&2
      exit 1
    fi
    for n in 1 2 3; do running "$n" && kill "$(cat "$dir/node-$n.pid")"; done
    for n in 1 2 3; do while running "$n"; do sleep 0.2; done; done
    [ -s target/classpath.txt ] || mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
    rm -rf "$dir"/node-*
    # Only the first JIT tier, and the serial collector: three JVMs on two cores spent most of
    # their CPU compiling code that the tests then ran little (a run of
    # reindex_undo_cluster_test.ts: 283 s of the nodes' CPU, 150 s wall; so, 119 s and 67 s).
    for n in 1 2 3; do
      mkdir -p "$dir/node-$n"
      nohup java -Xms512m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -cp "$(cat target/classpath.txt)" ClusterNode.java "$n" \
        "$dir/node-$n" >"$dir/node-$n.log" 2>&1 9>&- &
      echo $! >"$dir/node-$n.pid"
    done
    for _ in $(seq 1 600); do
      if green; then echo "opensearch cluster: up at $url (3 nodes)"; exit 0; fi
      for n in 1 2 3; do running "$n" || break 2; done
      sleep 1
    done
    echo "opensearch cluster: did not start; the last lines of its logs:" >&2
    for n in 1 2 3; do tail -n 30 "$dir/node-$n.log" >&2 || true; done
    exit 1
    ;;
  stop)
    for n in 1 2 3; do
      if running "$n"; then kill -CONT "$(cat "$dir/node-$n.pid")"; kill "$(cat "$dir/node-$n.pid")"; fi
      rm -f "$dir/node-$n.pid"
    done
    ;;
  *) echo "usage: tools/opensearch_cluster.sh [start|stop]" >&2; exit 2 ;;
esac
