#!/usr/bin/env bash
# Runs, on Deno, the search tests that talk to the real node against Elasticsearch 7.10.2 (OSS)
# instead of OpenSearch: every test file that imports tests/migrate/search/cluster.ts (their node
# is OPENSEARCH_URL), but those that need OpenSearch's three-node cluster (three_nodes.ts) and
# tests/npm/ (the packed package, under Node). The node is tools/elasticsearch.sh's; `npm test`
# starts it. The tests read what the node is from its `GET /`, as the runner does.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(grep -rlE --include='*_test.ts' '(/|")cluster\.ts"' tests |
  grep -v '^tests/npm/' | xargs grep -L 'three_nodes\.ts"' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "test_elasticsearch.sh: no test file imports tests/migrate/search/cluster.ts" >&2
  exit 1
fi
export OPENSEARCH_URL="${ELASTICSEARCH_URL:-http://127.0.0.1:9250}"
echo "Elasticsearch at $OPENSEARCH_URL: ${#files[@]} test files"
flags=(--allow-read --allow-write --allow-net --allow-env --allow-run --allow-sys)
# Type-checked by lint when tools/test_all.sh runs this (see tools/test_on.sh).
if [ "${THAW_TESTS_TYPE_CHECKED:-}" = 1 ]; then flags+=(--no-check); fi
exec deno test "${flags[@]}" "${files[@]}"
