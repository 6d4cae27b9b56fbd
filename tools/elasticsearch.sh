#!/usr/bin/env bash
# Starts one Elasticsearch 7.10.2 (OSS) node on 127.0.0.1:9250, unless one already answers: the
# last Apache-licensed Elasticsearch, for running the search tests against Elasticsearch too. It
# keeps clear of OpenSearch (tools/opensearch.sh: 9200/9300; tools/opensearch_cluster.sh:
# 9211-9213/9311-9313): HTTP 9250, transport 9350.
# The node comes from Maven Central (.ci/elasticsearch/pom.xml): the first start downloads ~50 MB.
#   tools/elasticsearch.sh start   start (idempotent) and wait until the cluster is yellow
#   tools/elasticsearch.sh stop    stop the node this script started
# Run the search tests against it with `npm run test:elasticsearch`.
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/elasticsearch"
name=elasticsearch
url="${ELASTICSEARCH_URL:-http://127.0.0.1:9250}"
home="$PWD/target/es-home"
pidfile="$PWD/target/elasticsearch.pid"

launch() {
  # The runner reads node_1/config/elasticsearch.yml when it exists (it sets only the paths, the
  # cluster and node names and http.port, which -baseHttpPort 9249 makes 9250 for node 1; a
  # taken port silently moves it up). It sets no discovery: without single-node the node would
  # probe 9300-9305, where OpenSearch answers.
  mkdir -p "$home/node_1/config"
  cat >"$home/node_1/config/elasticsearch.yml" <<'YAML'
discovery.type: single-node
transport.port: 9350
cluster.routing.allocation.disk.threshold_enabled: false
YAML
  # This runner does not read its standard input (it polls until closed); ES 7.10 runs on Java 17.
  # The serial collector, as tools/opensearch.sh says why.
  nohup java -Xms512m -Xmx512m -XX:+UseSerialGC -cp "$(cat target/classpath.txt)" \
    org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner \
    -basePath "$home" -numOfNode 1 -baseHttpPort 9249 </dev/null \
    >target/elasticsearch.log 2>&1 &
}

# shellcheck source=tools/search_node.sh
. "$tools/search_node.sh"
search_node "${1:-start}"
