#!/usr/bin/env bash
# Starts S3Proxy, an S3 API server, on jclouds' filesystem blob store, for the S3 object-storage
# tests. The server comes from Maven Central (.ci/s3proxy/pom.xml): the first start downloads
# ~45 MB. Its settings are .ci/s3proxy/s3proxy.properties: path-style requests, signed with AWS
# signature V2 or V4 by the key "thaw" / "thaw-secret".
#   tools/s3proxy.sh start   the server on 127.0.0.1:9310, unless one already answers there
#   tools/s3proxy.sh stop    stop the server this script started, and wait until it has ended
# A start wipes the blob store (.ci/s3proxy/target/data) and makes no bucket: every test makes
# buckets of its own names.
set -euo pipefail
tools="$(cd "$(dirname "$0")" && pwd)"
cd "$tools/../.ci/s3proxy"
name=s3proxy
port=9310
# shellcheck source=tools/java_server.sh
. "$tools/java_server.sh"

case "${1:-}" in
start)
  if java_server_up; then exit 0; fi
  rm -rf target/data && mkdir -p target/data
  java_server_start -Xms64m -Xmx256m -XX:+UseSerialGC \
    -Dlogback.configurationFile="$PWD/logback.xml" -Djclouds.filesystem.basedir="$PWD/target/data" \
    org.gaul.s3proxy.Main --properties "$PWD/s3proxy.properties"
  ;;
stop) java_server_stop wait ;;
*) echo "usage: tools/s3proxy.sh start|stop" >&2; exit 2 ;;
esac
