#!/usr/bin/env bash
# Every benchmark of bench/README.md in one run (`npm run bench`):
#   1. HTTP: Thaw, bare Hono and the runtime's own server on Deno, Bun and Node, Thaw and Hono
#      again with cors() and secureHeaders(), NestJS on express and fastify on Node, under wrk
#      (bench/http/run.ts; its options pass through, e.g. `npm run bench -- --rounds 5`);
#   2. the search runner, 1,000 files and an unchanged re-run, against the OpenSearch node of the
#      tests (tools/opensearch.sh);
#   3. the SQL runner, 1,000 files and an unchanged re-run, on SQLite.
# Installs what it needs and npm install does not: wrk from Debian, NestJS into bench/nest.
set -euo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1
started=$(date +%s)

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench: installing wrk (Debian)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
  else
    echo "bench: wrk not found; install it (apt-get install wrk)" >&2
    exit 1
  fi
fi
if [ ! -d bench/nest/node_modules/@nestjs/core ]; then
  echo "bench: installing NestJS into bench/nest (npm ci)"
  npm ci --prefix bench/nest --no-audit --no-fund --loglevel=error
fi
if curl -s -o /dev/null -m 1 http://127.0.0.1:9200; then
  echo "bench: warning: an OpenSearch node is running; the HTTP figures share the CPU with it" >&2
fi

deno run -A bench/http/run.ts "$@"
echo
bash tools/opensearch.sh start
deno run -A bench/search_runner_scale.ts
echo
deno run -A bench/sql_runner_scale.ts
echo
echo "bench: done in $(($(date +%s) - started)) s ($(date -u +%Y-%m-%d), $(nproc) cores)"
