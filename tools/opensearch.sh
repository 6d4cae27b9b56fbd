#!/usr/bin/env bash
# Starts one OpenSearch node on 127.0.0.1:9200 for the integration tests, unless one already answers.
# The node comes from Maven Central (.ci/opensearch/pom.xml): the first start downloads ~100 MB.
#   tools/opensearch.sh start   start (idempotent) and wait until the cluster is yellow
#   tools/opensearch.sh stop    stop the node this script started
# With OPENSEARCH_URL on another port of 127.0.0.1 (`npm test` runs a second search lane on 9201),
# a node of its own answers there: its own data folder, a cluster of one (single-node discovery,
# so that it never joins the node on 9200), transport on the HTTP port + 200 (9401 for 9201).
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/opensearch"
name=opensearch
url="${OPENSEARCH_URL:-http://127.0.0.1:9200}"
port=$(sed -nE 's#^http://127\.0\.0\.1:([0-9]+)/?$#\1#p' <<<"$url")
if [ -z "$port" ]; then
  echo "tools/opensearch.sh: OPENSEARCH_URL must be http://127.0.0.1:<port>, not '$url'" >&2
  exit 2
fi
home="$PWD/target/os-home"
pidfile="$PWD/target/opensearch.pid"
cluster=()
if [ "$port" != 9200 ]; then
  name="opensearch-$port"
  home="$PWD/target/os-home-$port"
  pidfile="$PWD/target/$name.pid"
  cluster=(-clusterName "$name")
fi

# The runner stops when its standard input closes, so it gets one that never does.
launch() {
  if [ "$port" != 9200 ]; then
    # The runner reads node_1/config/opensearch.yml when it exists, as the Elasticsearch one does.
    mkdir -p "$home/node_1/config"
    printf 'discovery.type: single-node\ntransport.port: %s\n' "$((port + 200))" \
      >"$home/node_1/config/opensearch.yml"
  fi
  nohup bash -c 'exec java -Xms1g -Xmx1g -cp "$(cat target/classpath.txt)" \
    org.codelibs.opensearch.runner.OpenSearchRunner \
    -basePath "$0" -numOfNode 1 -baseHttpPort "$1" "${@:2}" < <(sleep infinity)' \
    "$home" "$((port - 1))" "${cluster[@]}" >"target/$name.log" 2>&1 &
}

# shellcheck source=tools/search_node.sh
. "$tools/search_node.sh"
search_node "${1:-start}"
