#!/usr/bin/env bash
# Side-by-side A/B of Thaw at two commits on one runtime and route:
#   bash bench/http/ab.sh <base-rev> deno|bun|node GET|POST [pairs]
# Serves bench/http/serve.ts (the `thaw` app) from <base-rev> and from the working tree at once on
# CPU 0, loads them in turn with wrk on CPU 1 (3 s runs, `pairs` pairs, 5 by default), then again
# with the order swapped: the first server of a pair tends to measure a few percent faster
# whatever its code. Prints the medians, new/old per order, and their geometric mean, which
# cancels the order. Needs wrk and taskset (bench/run.sh installs wrk).
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: bench/http/ab.sh <base-rev> deno|bun|node GET|POST [pairs]}
runtime=${2:?runtime}
route=${3:?route}
pairs=${4:-5}
# shellcheck source=bench/http/ab_common.sh
source bench/http/ab_common.sh
old=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$old"
}
trap cleanup EXIT
git archive "$base" | tar -x -C "$old"
ln -s "$PWD/node_modules" "$old/node_modules"

start() { # dir port
  # A port something else answers on would be measured in place of this server.
  if curl -s -o /dev/null -m 1 "http://127.0.0.1:$2/"; then
    echo "ab.sh: port $2 is in use (another ab.sh run?)" >&2
    exit 1
  fi
  (cd "$1" && exec taskset -c 0 "${run[@]}" bench/http/serve.ts thaw "$2" >/dev/null 2>&1) &
  pids+=($!)
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$2/users/1" && return; sleep 0.1; done
  echo "ab.sh: the server on port $2 did not start" >&2
  exit 1
}
rate() { # port
  taskset -c 1 wrk -t1 -c64 -d3s -s bench/http/report.lua "http://127.0.0.1:$1$path" |
    awk '/Requests\/sec/ { print $2 }'
}

start "$old" 9201
start "$PWD" 9202
for port in 9201 9202; do rate "$port" >/dev/null; done # warm-up
declare -A runs
for order in old-first new-first; do
  a=9201 b=9202
  [ "$order" = new-first ] && a=9202 b=9201
  for _ in $(seq "$pairs"); do
    runs[$order-$a]+="$(rate "$a") "
    runs[$order-$b]+="$(rate "$b") "
  done
done
result=()
for order in old-first new-first; do
  o=$(tr ' ' '\n' <<<"${runs[$order-9201]}" | grep . | median)
  n=$(tr ' ' '\n' <<<"${runs[$order-9202]}" | grep . | median)
  ratio=$(awk -v n="$n" -v o="$o" 'BEGIN { printf "%.3f", n / o }')
  result+=("$ratio")
  echo "$runtime $route $order: old $o req/s, new $n req/s, new/old $ratio"
done
awk -v a="${result[0]}" -v b="${result[1]}" -v r="$runtime $route" \
  'BEGIN { printf "%s: new/old %.3f (geometric mean of both orders)\n", r, sqrt(a * b) }'
