#!/usr/bin/env bash
# Rule queries with and without the operator-kind index, on a copy of a
# verified database (e.g. `taso generate` + `taso verify` at size 3): a store
# started with --op_index=false (every operator query scans, as before the
# index), then restarted to build the index (its build time from the store's
# log), then the same queries again. Prints the median of RUNS wall times per
# query and phase (`taso rules list --store ADDR ...` against the running
# store, so store start-up is not counted), and the stored rules each phase
# reads: all of them when scanning, with the index those whose operators
# pass (what the same query lists over every status).
#   bench/query_run.sh DB_DIR [RUNS]      # DB_DIR holds store-0; it is copied, never changed
set -euo pipefail
src=${1:?usage: bench/query_run.sh DB_DIR [RUNS]}
runs=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso //bin:taso_rules_db >/dev/null 2>&1
taso="$root/bazel-bin/cli/taso"
store_bin="$root/bazel-bin/bin/taso_rules_db"
work=$(mktemp -d)
trap 'if [ -n "${pid:-}" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
cp -r "$src/store-0" "$work/store-0"
rm -f "$work/store-0/LOCK"

start() {  # start FLAGS...: a store on the copy, sets pid and addr
  rm -f "$work/port"
  "$store_bin" --db "$work/store-0" --listen 127.0.0.1:0 --port_file "$work/port" "$@" >>"$work/store.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do [ -s "$work/port" ] && break; sleep 0.1; done
  addr="127.0.0.1:$(cat "$work/port")"
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }

queries=("--op matmul" "--op-all matmul,concat" "--only-ops conv2d,relu" "--op-all conv2d,poolavg,enlarge" "--op transpose")
every_status=candidate,proved,refuted,timeout,unknown,rejected_precheck,pruned
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_query() {  # time_query FLAGS: median wall ms of RUNS listings, and the rules listed
  local t
  for _ in $(seq 1 "$runs"); do
    t=$(date +%s%N)
    # shellcheck disable=SC2086
    "$taso" rules list --store "$addr" $1 >"$work/out"
    echo $(( ($(date +%s%N) - t) / 1000000 ))
  done | median
}

start --op_index=false
declare -A scan
for q in "${queries[@]}"; do scan[$q]=$(time_query "$q"); done
stop
start --op_index=true
for _ in $(seq 1 6000); do grep -q "operator index is ready" "$work/store.log" && break; sleep 0.1; done
build=$(sed -n 's/.*operator index is ready (\(.*\) s).*/\1/p' "$work/store.log")
rules=$("$taso" rules stats --store "$addr" --json | sed 's/.*"rules": {\([^}]*\)}.*/\1/' | tr ',' '\n' | sed 's/.*: //' | paste -sd+ | bc)
echo "rules stored: $rules; index built in ${build} s; median of $runs runs, ms"
printf '%-36s %7s %10s %10s %8s %8s\n' query listed "read:scan" "read:index" "ms:scan" "ms:index"
for q in "${queries[@]}"; do
  indexed=$(time_query "$q")
  listed=$(wc -l <"$work/out")
  # shellcheck disable=SC2086
  read=$("$taso" rules list --store "$addr" $q --status "$every_status" | wc -l)
  printf '%-36s %7s %10s %10s %8s %8s\n' "$q" "$listed" "$rules" "$read" "${scan[$q]}" "$indexed"
done
stop
