#!/usr/bin/env bash
# Thaw's ratio to bare Hono at a base commit and in the working tree, measured side by side:
#   bash bench/http/ab_ratio.sh <base-rev|base-dir> deno|bun|node GET|POST [cycles]
# Serves bench/http/serve.ts's `thaw` and `hono` apps from both trees at once (four servers on
# CPU 0) and loads them in turn with wrk on CPU 1, 3 s each, in an order that rotates every cycle
# (8 by default). Each cycle gives Thaw/Hono in each tree, in requests/s and in the server's CPU
# time per request (/proc), and the change of that ratio (head/base); the medians over the cycles
# are printed. A base directory keeps its own node_modules (a `git worktree` after `npm ci`), so a
# dependency bump (the Node adapter) counts on both sides; a revision is exported with git
# archive and shares the working tree's node_modules. Needs wrk and taskset.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: bench/http/ab_ratio.sh <base-rev|base-dir> deno|bun|node GET|POST [cycles]}
runtime=${2:?runtime}
route=${3:?route}
cycles=${4:-8}
# shellcheck source=bench/http/ab_common.sh
source bench/http/ab_common.sh
pids=()
tmp=
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
if [ -d "$base" ]; then
  old=$(cd "$base" && pwd)
else
  tmp=$(mktemp -d)
  old=$tmp
  git archive "$base" | tar -x -C "$old"
  ln -s "$PWD/node_modules" "$old/node_modules"
fi

declare -A pid_of
start() { # name dir app port
  if curl -s -o /dev/null -m 1 "http://127.0.0.1:$4/"; then
    echo "ab_ratio.sh: port $4 is in use" >&2
    exit 1
  fi
  (cd "$2" && exec taskset -c 0 "${run[@]}" bench/http/serve.ts "$3" "$4" >/dev/null 2>&1) &
  pids+=($!)
  pid_of[$1]=$!
  for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$4/users/1" && return; sleep 0.1; done
  echo "ab_ratio.sh: $1 on port $4 did not start" >&2
  exit 1
}
ticks() { # pid: user + system clock ticks so far
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
declare -A port_of=([base-thaw]=9411 [head-thaw]=9412 [base-hono]=9413 [head-hono]=9414)
start base-thaw "$old" thaw 9411
start head-thaw "$PWD" thaw 9412
start base-hono "$old" hono 9413
start head-hono "$PWD" hono 9414
# One load of a server: requests/s and CPU µs per request, from the same 3 s.
measure() { # name
  local pid=${pid_of[$1]} before after out rps
  before=$(ticks "$pid")
  out=$(taskset -c 1 wrk -t1 -c64 -d3s -s bench/http/report.lua "http://127.0.0.1:${port_of[$1]}$path")
  after=$(ticks "$pid")
  rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
  if grep -q "Non-2xx\|Socket errors" <<<"$out"; then
    echo "ab_ratio.sh: $1 answered with errors:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk -v r="$rps" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%s %.2f\n", r, t / hz * 1e6 / (r * 3) }'
}
names=(base-thaw head-thaw base-hono head-hono)
for name in "${names[@]}"; do measure "$name" >/dev/null; done # warm-up
rows=()
for c in $(seq "$cycles"); do
  declare -A rps=() cpu=()
  for i in 0 1 2 3; do
    name=${names[$(((i + c) % 4))]}
    read -r r u < <(measure "$name")
    rps[$name]=$r
    cpu[$name]=$u
  done
  row=$(awk -v bt="${rps[base-thaw]}" -v ht="${rps[head-thaw]}" -v bh="${rps[base-hono]}" \
    -v hh="${rps[head-hono]}" -v cbt="${cpu[base-thaw]}" -v cht="${cpu[head-thaw]}" \
    -v cbh="${cpu[base-hono]}" -v chh="${cpu[head-hono]}" 'BEGIN {
      printf "%.4f %.4f %.4f %.4f %.4f %.4f", bt / bh, ht / hh, (ht / hh) / (bt / bh),
        cbt / cbh, cht / chh, (cht / chh) / (cbt / cbh) }')
  rows+=("$row")
  echo "cycle $c: req/s thaw ${rps[base-thaw]} -> ${rps[head-thaw]}, hono ${rps[base-hono]} -> ${rps[head-hono]}; CPU µs/req thaw ${cpu[base-thaw]} -> ${cpu[head-thaw]}, hono ${cpu[base-hono]} -> ${cpu[head-hono]}"
done
col() { printf '%s\n' "${rows[@]}" | awk -v k="$1" '{ print $k }' | median; }
printf '%s %s, median of %s cycles:\n' "$runtime" "$route" "$cycles"
printf '  Thaw/Hono req/s: base %.3f, head %.3f, head/base %.3f\n' "$(col 1)" "$(col 2)" "$(col 3)"
printf '  Thaw/Hono CPU per request: base %.3f, head %.3f, head/base %.3f\n' "$(col 4)" "$(col 5)" "$(col 6)"
