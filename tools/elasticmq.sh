#!/usr/bin/env bash
# Starts ElasticMQ, an SQS-compatible queue server, for the jobs' SQS store tests. The server
# comes from Maven Central (.ci/elasticmq/pom.xml): the first start downloads ~40 MB.
#   tools/elasticmq.sh start   the server on 127.0.0.1:9324, unless one already answers there
#   tools/elasticmq.sh stop    stop the server this script started
# A start begins with no queues: every test makes queues of its own names.
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/elasticmq"
mkdir -p target
port=9324

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

case "${1:-}" in
start)
  if answers; then echo "elasticmq: already up on $port"; exit 0; fi
  mvn -B -q dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
  : >target/elasticmq.log
  # In a session of its own: a test run that is killed must not take the server down with it.
  setsid nohup java -Xms64m -Xmx256m -XX:+UseSerialGC -Dconfig.file="$PWD/elasticmq.conf" \
    -cp "$(cat target/classpath.txt)" org.elasticmq.server.Main >>target/elasticmq.log 2>&1 &
  echo $! >target/pid
  for _ in $(seq 1 600); do
    if answers; then echo "elasticmq: up on $port"; exit 0; fi
    if ! kill -0 "$(cat target/pid)" 2>/dev/null; then break; fi
    sleep 0.1
  done
  echo "elasticmq: the server did not start on $port; the last lines of its log:" >&2
  tail -n 40 target/elasticmq.log >&2 || true
  exit 1
  ;;
stop)
  if [ -f target/pid ]; then kill "$(cat target/pid)" 2>/dev/null || true; fi
  rm -f target/pid
  ;;
*) echo "usage: tools/elasticmq.sh start|stop" >&2; exit 2 ;;
esac
