#!/usr/bin/env bash
# Starts one OpenSearch node on 127.0.0.1:9200 for the integration tests, unless one already answers.
# The node comes from Maven Central (.ci/opensearch/pom.xml): the first start downloads ~100 MB.
#   tools/opensearch.sh start   start (idempotent) and wait until the cluster is yellow
#   tools/opensearch.sh stop    stop the node this script started
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/opensearch"
name=opensearch
url="${OPENSEARCH_URL:-http://127.0.0.1:9200}"
home="$PWD/target/os-home"
pidfile="$PWD/target/opensearch.pid"

# The runner stops when its standard input closes, so it gets one that never does. The serial
# collector: on the two cores the suite runs on, G1's concurrent threads cost a tenth more CPU for
# the same tests (a run of the reindex tests on a fresh node: 151 s of CPU with G1, 136 s serial).
launch() {
  nohup bash -c 'exec java -Xms1g -Xmx1g -XX:+UseSerialGC -cp "$(cat target/classpath.txt)" \
    org.codelibs.opensearch.runner.OpenSearchRunner \
    -basePath "$0" -numOfNode 1 -baseHttpPort 9199 < <(sleep infinity)' "$home" \
    >target/opensearch.log 2>&1 &
}

# shellcheck source=tools/search_node.sh
. "$tools/search_node.sh"
search_node "${1:-start}"
