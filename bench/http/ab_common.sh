# Shared by ab.sh and ab_ratio.sh, sourced after `cd` to the repository: from `$runtime` (deno, bun
# or node) and `$route` (GET or POST), sets `run` (the command that runs a .ts file), `path` (the
# route's URL path) and the body report.lua sends; defines `median` (of numbers on stdin).
export PATH=$PWD/node_modules/.bin:$PATH
case $runtime in
deno) run=(deno run -A) ;;
bun) run=(bun) ;;
node) run=(node --import tsx) ;;
*) echo "$(basename "$0"): runtime must be deno, bun or node" >&2 && exit 2 ;;
esac
case $route in
POST)
  export BENCH_METHOD=POST BENCH_BODY='{"name":"Ada Lovelace","email":"ada@example.com"}'
  path=/users
  ;;
GET)
  export BENCH_METHOD=GET BENCH_BODY=
  path=/users/42
  ;;
*) echo "$(basename "$0"): route must be GET or POST" >&2 && exit 2 ;;
esac
# shellcheck disable=SC2034 # used by the scripts that source this file
readonly run path

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
