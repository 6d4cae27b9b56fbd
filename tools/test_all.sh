#!/usr/bin/env bash
# `npm test`: lint, while the system packages are installed and the servers start (each wants a
# core, and each spends its first seconds waiting on something else), then the whole suite in four
# lanes side by side, each running its steps in turn (tools/unit_tests.ts --part). The cluster lane
# hangs the nodes of the three-node cluster, then runs against Elasticsearch; the search lane runs
# the tests of the single OpenSearch node; the Kafka lane those of the Kafka brokers. Only one lane
# uses each of those servers. The other integration tests (databases, Redis, Prometheus, nginx,
# workerd, Chromium, ElasticMQ) give each test its own database, index, queue or port, so their
# runtimes' steps are spread over the lanes, as are the unit tests, so that the lanes take about as
# long. Most of an integration test's time is spent waiting on a server, so the lanes overlap on two
# cores. Tests must hold under that load: they wait on states, and a bound a healthy server must
# beat is a give-up, never a deadline.
#
# Every runtime runs every unit test. The integration tests run on Deno, Bun and the current Node
# LTS, not again on the machine's Node 20 (past its end of life), which runs the unit tests: the
# integration parts on four runtimes no longer held within the CI's 90 minutes on two cores.
#
# Each step's output is printed whole when it ends, never interleaved with another's; a table of
# every step's status and time closes the run, which fails when any step did. Every step runs even
# after one failed, so that one run shows every failure.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs the steps of one lane in turn. A step is `elasticsearch` or test_on.sh's arguments.
lane() {
  local name=$1 step log start status
  shift
  for step in "$@"; do
    log="$work/$(tr ' ' '-' <<<"$step").log"
    start=$SECONDS
    status=0
    # 40 minutes is a give-up, paid only by a step that hangs: it then fails with its output shown
    # (exit 124), and the other steps still run.
    if [ "$step" = elasticsearch ]; then
      timeout --kill-after=60 2400 bash tools/test_elasticsearch.sh >"$log" 2>&1 || status=$?
    else
      # shellcheck disable=SC2086 # a step is words
      timeout --kill-after=60 2400 bash tools/test_on.sh --part $step >"$log" 2>&1 || status=$?
    fi
    {
      flock 9
      echo "=== $step (lane $name): exit $status after $((SECONDS - start)) s"
      cat "$log"
      printf '%s\t%s\t%s\t%s\n' "$name" "$step" "$status" "$((SECONDS - start))" >>"$work/steps"
    } 9>"$work/print.lock"
  done
}

# Lint and set-up side by side; both must pass before any test runs.
start=$SECONDS
npm run lint >"$work/lint.log" 2>&1 &
lint=$!
set_up=0
{
  bash tools/system_packages.sh &&
    npm ci --prefix tools/openapi-typescript --no-audit --no-fund --loglevel=error &&
    bash tools/opensearch.sh start && bash tools/opensearch_cluster.sh start &&
    bash tools/databases.sh start && bash tools/elasticsearch.sh start &&
    bash tools/kafka.sh start && bash tools/kafka.sh start-cluster &&
    bash tools/elasticmq.sh start
} || set_up=$?
linted=0
wait "$lint" || linted=$?
cat "$work/lint.log"
echo "=== lint: exit $linted; set-up: exit $set_up; $((SECONDS - start)) s"
# The code's shape (longest functions, non-null assertions, exports...), printed once per run so
# that its figures are always current. For reading only: whatever it prints or exits with, the run
# goes on.
echo "=== code shape (tools/code_shape.ts)"
timeout 120 deno run --allow-read --allow-write --allow-run tools/code_shape.ts ||
  echo "code_shape.ts: exit $? (its figures are incomplete; the run goes on)"
if [ "$linted" -ne 0 ] || [ "$set_up" -ne 0 ]; then exit 1; fi
# Lint's `deno check` covered every test file: the Deno steps need not check them again.
export THAW_TESTS_TYPE_CHECKED=1

cluster=("cluster deno" "cluster bun" "cluster node lts")
kafka=("kafka deno" "kafka bun" "kafka node lts")
search=("search deno" "search bun" "search node lts")
others=("other deno" "other bun" "other node lts")
units=("unit bun" "unit node lts" "unit deno" "unit node machine")
start=$SECONDS
# A lane's servers stop once its last step that needs them has ended: idle brokers and nodes still
# take a share of the two cores from the steps left. The search lane is the longest (about 70 minutes
# of the last 2-core run); the others are filled to about its length.
{
  lane cluster "${cluster[@]}"
  bash tools/opensearch_cluster.sh stop || true
  lane cluster elasticsearch
  bash tools/elasticsearch.sh stop || true
  lane cluster "${others[2]}"
} &
{
  lane kafka "${kafka[@]}"
  bash tools/kafka.sh stop || true
  lane kafka "${others[0]}" "${units[1]}"
} &
lane search "${search[@]}" &
lane rest "${others[1]}" "${units[0]}" "${units[2]}" "${units[3]}" &
wait
bash tools/elasticmq.sh stop || true

echo "=== steps: lane, step, exit, seconds ($((SECONDS - start)) s in all)"
touch "$work/steps"
awk -F'\t' '{ printf "%-8s %-20s %4s %6s\n", $1, $2, $3, $4 }' "$work/steps"
expected=$((${#cluster[@]} + ${#kafka[@]} + ${#search[@]} + ${#others[@]} + ${#units[@]} + 1))
if [ "$(wc -l <"$work/steps")" -ne "$expected" ]; then
  echo "test_all.sh: $(wc -l <"$work/steps") of $expected steps ended" >&2
  exit 1
fi
if awk -F'\t' '$3 != 0 { bad = 1 } END { exit !bad }' "$work/steps"; then
  # CI may keep only the end of the output: name the failed tests here too, a step's own lines
  # for a failure (Node's ✖, Bun's (fail), Deno's FAILED), below the step that printed them.
  for log in "$work"/*.log; do
    failures=$(grep -E '✖|^\(fail\)|FAILED|^error: ' "$log" | head -n 30 || true)
    if [ -n "$failures" ]; then printf '=== failures in %s\n%s\n' "$(basename "$log" .log)" "$failures"; fi
  done
  echo "test_all.sh: a step failed (exit not 0 above)" >&2
  exit 1
fi
