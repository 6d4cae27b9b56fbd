#!/usr/bin/env bash
# Starts ElasticMQ, an SQS-compatible queue server, for the jobs' SQS store tests. The server
# comes from Maven Central (.ci/elasticmq/pom.xml): the first start downloads ~40 MB.
#   tools/elasticmq.sh start   the server on 127.0.0.1:9324, unless one already answers there
#   tools/elasticmq.sh stop    stop the server this script started
# A start begins with no queues: every test makes queues of its own names.
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/elasticmq"
name=elasticmq
port=9324
# shellcheck source=tools/java_server.sh
. "$tools/java_server.sh"

case "${1:-}" in
start)
  if java_server_up; then exit 0; fi
  java_server_start -Xms64m -Xmx256m -XX:+UseSerialGC -Dconfig.file="$PWD/elasticmq.conf" \
    org.elasticmq.server.Main
  ;;
stop) java_server_stop ;;
*) echo "usage: tools/elasticmq.sh start|stop" >&2; exit 2 ;;
esac
