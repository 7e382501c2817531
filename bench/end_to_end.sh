#!/usr/bin/env bash
# Rule discovery end to end, as a user runs it: `taso generate` then `taso verify` (which prunes) on a
# fresh database, RUNS times; prints each run's wall times and the medians, and checks every run
# reaches the same reduction table.
#   bench/end_to_end.sh MAX_OPS [RUNS] [SHARDS] [WORKERS]
# TASO=path/to/cli/taso uses that build (with its executables beside it) instead of building -c opt.
set -euo pipefail
max_ops=${1:?usage: bench/end_to_end.sh MAX_OPS [RUNS] [SHARDS] [WORKERS]}
runs=${2:-3}
shards=${3:-2}
workers=${4:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=bench/bench_env.sh
source "$root/bench/bench_env.sh"
bench_taso

seconds() { python3 -c 'import sys,time; print(f"{time.time():.3f}")'; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
table=""
: >"$work/gen" && : >"$work/verify" && : >"$work/total"
for run in $(seq 1 "$runs"); do
  db="$work/run$run"
  t0=$(seconds)
  "$taso" generate --max-ops "$max_ops" --shards "$shards" --db "$db" --json >"$work/gen.json" 2>"$work/gen.err" ||
    { cat "$work/gen.err" >&2; exit 1; }
  t1=$(seconds)
  "$taso" verify --db "$db" --workers "$workers" --json >"$work/verify.json" 2>"$work/verify.err" ||
    { cat "$work/verify.err" >&2; exit 1; }
  t2=$(seconds)
  row=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["proved"], d["after_renaming"], d["after_common_subgraph"], d["unknown"])' "$work/verify.json")
  [[ -z "$table" ]] && table=$row
  [[ "$row" == "$table" ]] || { echo "run $run: reduction table $row differs from run 1's $table" >&2; exit 1; }
  gen=$(python3 -c "print(f'{$t1 - $t0:.2f}')"); verify=$(python3 -c "print(f'{$t2 - $t1:.2f}')")
  total=$(python3 -c "print(f'{$t2 - $t0:.2f}')")
  echo "$gen" >>"$work/gen"; echo "$verify" >>"$work/verify"; echo "$total" >>"$work/total"
  echo "run $run: generate ${gen} s, verify ${verify} s, end to end ${total} s; disk $(du -sh "$db" | cut -f1)"
  rm -rf "$db"
done
read -r proved after_renaming after_subgraph unknown <<<"$table"
echo "size $max_ops, $shards generator shards, $workers verifiers, $(nproc) cores:" \
  "proved $proved -> $after_renaming after renaming -> $after_subgraph after common subgraph ($unknown unknown)"
echo "median of $runs: generate $(median <"$work/gen") s, verify $(median <"$work/verify") s," \
  "end to end $(median <"$work/total") s"
