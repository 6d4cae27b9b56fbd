#!/usr/bin/env bash
# `npm test`: lint, while the system packages are installed and the servers start (each wants a
# core, and each spends its first seconds waiting on something else), then the whole suite in four
# lanes side by side, each running its steps in turn (tools/unit_tests.ts --part). The cluster lane
# hangs the nodes of the three-node cluster, then runs against Elasticsearch; the search lane runs
# the tests of the single OpenSearch node; the Kafka lane those of the Kafka brokers. Only one lane
# uses each of those servers. The other integration tests (databases, Redis, Prometheus, nginx,
# workerd, Chromium, ElasticMQ, S3Proxy) give each test its own database, index, queue, bucket or
# port, so their runtimes' steps are spread over the lanes, as are the unit tests, so that the lanes
# take about as long. Most of an integration test's time is spent waiting on a server, so the lanes
# overlap on two cores. Tests must hold under that load: they wait on states, and a bound a healthy
# server must beat is a give-up, never a deadline.
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
  local name=$1 step log start status cpu
  shift
  for step in "$@"; do
    log="$work/$(tr ' ' '-' <<<"$step").log"
    start=$SECONDS
    status=0
    (
      code=0
      # 55 minutes is a give-up, paid only by a step that hangs: it then fails with its output
      # shown (exit 124), and the other steps still run. The longest step, Node's other tests
      # first in its lane, took 2,760 s in the last local run (the storage tests joined it). A
      # hang there, with its lane's other steps (about 1,230 s) and the set-up (364 s), ends
      # within the CI's 90 minutes, just: a step that hangs must still be fixed.
      local give_up=3300
      if [ "$step" = elasticsearch ]; then
        timeout --kill-after=60 "$give_up" bash tools/test_elasticsearch.sh >"$log" 2>&1 || code=$?
      else
        # shellcheck disable=SC2086 # a step is words
        timeout --kill-after=60 "$give_up" bash tools/test_on.sh --part $step >"$log" 2>&1 || code=$?
      fi
      # The CPU seconds (user and system) of the step's own processes, the runtimes and what
      # they started (workerd, Chromium, ...); the shared servers' are not among them. The run
      # is CPU-bound on two cores: this, not a step's length, says what a step costs the others.
      # (`times` in this shell: in a pipe, it would be a new process's, with no children.)
      times >"$log.times"
      awk 'NR == 2 {
        t = 0
        for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] }
        printf "%d", t
      }' "$log.times" >"$log.cpu"
      exit "$code"
    ) || status=$?
    cpu=$(cat "$log.cpu" 2>/dev/null || echo "?")
    {
      flock 9
      echo "=== $step (lane $name): exit $status after $((SECONDS - start)) s, $cpu s of CPU"
      cat "$log"
      printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$step" "$status" "$((SECONDS - start))" "$cpu" \
        >>"$work/steps"
    } 9>"$work/print.lock"
  done
}

# The CPU time each server has spent so far (the databases' main processes: an ended backend's is
# not counted), printed before a lane stops one and at the end: with each step's own, what the
# run's two cores went to.
servers_cpu() {
  {
    flock 9
    echo "=== servers' CPU time so far ($1)"
    ps -C java,postgres,mariadbd,redis-server -o pid=,cputime=,args= | awk '{
      name = $3
      for (i = 3; i <= NF; i++) if ($i ~ /^(org\.|kafka\.)/) { name = $i; break }
      printf "  %-8s %s %s\n", $1, $2, name
    }' | grep -v " postgres:$" || true
  } 9>"$work/print.lock"
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
    bash tools/elasticmq.sh start && bash tools/s3proxy.sh start
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
# Where the lanes below run them: each once (the count of steps that ended is checked).
others=("other deno" "other bun" "other node lts")
units=("unit deno" "unit bun" "unit node lts" "unit node machine")
start=$SECONDS
# A lane's servers stop once its last step that needs them has ended: idle brokers and nodes still
# take a share of the two cores from the steps left. The search lane's three steps are the longest
# run of steps that must not overlap (about 66 minutes of the last 2-core runs); the other lanes are
# filled to about its length, the longest step first where it may go first.
{
  lane cluster "${cluster[@]}"
  servers_cpu "the cluster's nodes stop"
  bash tools/opensearch_cluster.sh stop || true
  lane cluster elasticsearch
  servers_cpu "Elasticsearch stops"
  bash tools/elasticsearch.sh stop || true
  lane cluster "other deno" "unit node lts"
} &
{
  lane kafka "${kafka[@]}"
  servers_cpu "the brokers stop"
  bash tools/kafka.sh stop || true
  lane kafka "other bun" "unit node machine"
} &
lane search "${search[@]}" &
lane rest "other node lts" "unit deno" "unit bun" &
wait
servers_cpu "the end"
bash tools/elasticmq.sh stop || true
bash tools/s3proxy.sh stop || true

echo "=== steps: lane, step, exit, seconds, CPU seconds ($((SECONDS - start)) s in all)"
touch "$work/steps"
awk -F'\t' '{ printf "%-8s %-20s %4s %6s %6s\n", $1, $2, $3, $4, $5 }' "$work/steps"
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
    if [ -n "$failures" ]; then
      printf '=== failures in %s\n%s\n' "$(basename "$log" .log)" "$failures"
      # The first failure's own lines: Bun prints the error above its (fail) line, Node and Deno
      # below theirs.
      first=$(grep -n -m 1 -E '✖|^\(fail\)|FAILED|^error: ' "$log" | cut -d: -f1)
      printf '=== the first failure in %s, with the lines around it\n' "$(basename "$log" .log)"
      sed -n "$((first > 40 ? first - 40 : 1)),$((first + 20))p" "$log"
    fi
  done
  echo "test_all.sh: a step failed (exit not 0 above)" >&2
  exit 1
fi
