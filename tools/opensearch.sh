#!/usr/bin/env bash
# Starts one OpenSearch node on 127.0.0.1:9200 for the integration tests, unless one already answers.
# The node comes from Maven Central (.ci/opensearch/pom.xml): the first start downloads ~100 MB.
#   tools/opensearch.sh start   start (idempotent) and wait until the cluster is yellow
#   tools/opensearch.sh stop    stop the node this script started
set -euo pipefail
cd "$(dirname "$0")/../.ci/opensearch"
url="${OPENSEARCH_URL:-http://127.0.0.1:9200}"
home="$PWD/target/os-home"
pidfile="$PWD/target/opensearch.pid"

healthy() { curl -fs -m 5 "$url/_cluster/health?wait_for_status=yellow&timeout=5s" >/dev/null 2>&1; }
# Every test makes its own indices and the suite runs four times (Deno, Bun, two Nodes) against one
# node: the default of 1,000 shards per node would run out before the end.
roomy() {
  curl -fs -m 10 -X PUT "$url/_cluster/settings" -H 'content-type: application/json' \
    -d '{"persistent":{"cluster.max_shards_per_node":20000}}' >/dev/null
}

case "${1:-start}" in
  start)
    mkdir -p target
    # Two starts at once (two test runs, two shells) would each wipe the data folder under the
    # other's node: the second waits for the first, then finds the node up. The node does not
    # inherit the lock (9>&- below), or no later start could take it while the node runs.
    exec 9>target/start.lock
    flock 9
    if healthy; then roomy; echo "opensearch: already up at $url"; exit 0; fi
    # The runner's own Maven classpath; exec:java does not work (the node closes at once under it).
    mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
    rm -rf "$home"
    # The runner stops when its standard input closes, so it gets one that never does.
    nohup bash -c 'exec java -Xms1g -Xmx1g -cp "$(cat target/classpath.txt)" \
      org.codelibs.opensearch.runner.OpenSearchRunner \
      -basePath "$0" -numOfNode 1 -baseHttpPort 9199 < <(sleep infinity)' "$home" \
      >target/opensearch.log 2>&1 9>&- &
    echo $! >"$pidfile"
    for _ in $(seq 1 120); do
      if healthy; then roomy; echo "opensearch: up at $url"; exit 0; fi
      if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then break; fi
      sleep 1
    done
    echo "opensearch: did not start; the last lines of its logs:" >&2
    tail -n 40 target/opensearch.log "$home"/node_1/logs/*.log 2>/dev/null >&2 || true
    exit 1
    ;;
  stop)
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
    ;;
  *) echo "usage: tools/opensearch.sh [start|stop]" >&2; exit 2 ;;
esac
