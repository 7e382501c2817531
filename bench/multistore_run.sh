#!/usr/bin/env bash
# One job through the cluster path on loopback: STORES taso_rules_db processes told their index,
# `taso job create`, one taso_generator process per shard, WORKERS taso_verifier processes over every
# store, then the rules pruned across the shards (`taso rules prune --store LIST`) and exported, compared
# rule for rule with REFERENCE (a single-store export of the same spec and size; made here when not given).
#   bench/multistore_run.sh MAX_OPS [STORES] [SHARDS] [WORKERS]
#   REFERENCE=FILE  a `taso rules export --db D` of the single-store run (text format)
#   TASO=path/to/cli/taso  uses that build (taso_rules_db, taso_generator, taso_verifier beside it)
#   KEEP=DIR  keeps the stores, logs and exports there
set -euo pipefail
max_ops=${1:?usage: bench/multistore_run.sh MAX_OPS [STORES] [SHARDS] [WORKERS]}
stores=${2:-4}
shards=${3:-2}
workers=${4:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work"
# shellcheck source=bench/bench_env.sh
source "$root/bench/bench_env.sh"
bench_taso
bin=$(cd "$(dirname "$taso")/../bin" && pwd)
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  [[ -n "${KEEP:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
seconds() { python3 -c 'import time; print(f"{time.time():.3f}")'; }
since() { python3 -c "print(f'{$(seconds) - $1:.1f}')"; }
# Peak resident memory of the whole process tree, sampled every second.
: >"$work/rss"
(while sleep 1; do
  ps -C taso,taso_rules_db,taso_generator,taso_verifier -o rss= | awk '{s += $1} END {print s + 0}' >>"$work/rss"
done) &
pids+=($!)

t0=$(seconds)
list=""
for i in $(seq 0 $((stores - 1))); do
  dir="$work/store$i"
  "$bin/taso_rules_db" --db "$dir" --listen 127.0.0.1:0 --port_file "$dir.port" --store_index "$i" \
    --store_count "$stores" >"$dir.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do [[ -s "$dir.port" ]] && break; sleep 0.1; done
  [[ -s "$dir.port" ]] || { tail -3 "$dir.log" >&2; exit 1; }
  list="${list:+$list,}127.0.0.1:$(cat "$dir.port")"
done
"$taso" job create --store "$list" --max-ops "$max_ops" --shards "$shards" --job ms >"$work/create.out"
gens=()
for s in $(seq 0 $((shards - 1))); do
  "$bin/taso_generator" --store "$list" --job ms --shard "$s" --num_shards "$shards" >"$work/gen$s.log" 2>&1 &
  gens+=($!)
done
for p in "${gens[@]}"; do wait "$p" || { echo "a generator failed:" >&2; tail -3 "$work"/gen*.log >&2; exit 1; }; done
# The stores finalize their slices once every shard is done; a verifier refuses a job still finalizing.
while "$taso" job status --job ms --store "$list" --json | grep -qE 'JOB_STATE_(GENERATING|FINALIZING)'; do
  sleep 2
done
generated=$(since "$t0")
vers=()
for w in $(seq 1 "$workers"); do
  "$bin/taso_verifier" --store "$list" --job ms --worker_id "v$w" >"$work/verifier$w.log" 2>&1 &
  vers+=($!)
done
for p in "${vers[@]}"; do wait "$p" || { echo "a verifier failed:" >&2; tail -3 "$work"/verifier*.log >&2; exit 1; }; done
verified=$(since "$t0")
# Each store pruned only its slice (or, above --prune_max_rules, nothing); the union is pruned as one set
# and the statuses written back to every store, streaming (a size-4 job holds 2.8M proved rules).
"$taso" rules prune --store "$list" --job ms --json >"$work/prune.json"
pruned=$(since "$t0")
"$taso" rules export --store "$list" >"$work/multi.rules"
"$taso" rules stats --store "$list" >"$work/stats.out"
total=$(since "$t0")
echo "size $max_ops over $stores stores, $shards generator processes, $workers verifiers, $(nproc) cores:" \
  "generated and finalized at ${generated} s, verified at ${verified} s, pruned across the shards at ${pruned} s," \
  "exported at ${total} s;" \
  "peak RSS of all processes $(sort -n "$work/rss" | tail -1 | awk '{printf "%.2f GiB", $1 / 1048576}');" \
  "disk $(du -sch "$work"/store? | tail -1 | cut -f1)"
cat "$work/stats.out"

reference=${REFERENCE:-}
if [[ -z "$reference" ]]; then
  bench_log "making the single-store reference"
  "$taso" generate --max-ops "$max_ops" --shards "$shards" --db "$work/single" --json >/dev/null
  "$taso" verify --db "$work/single" --workers "$workers" --json >/dev/null
  "$taso" rules export --db "$work/single" >"$work/single.rules"
  reference="$work/single.rules"
fi
if diff "$reference" "$work/multi.rules" >"$work/rules.diff"; then
  echo "rule for rule equal to the single-store set: $(wc -l <"$work/multi.rules") rules"
else
  echo "DIFFERENT from the single-store set ($(wc -l <"$reference") vs $(wc -l <"$work/multi.rules") lines):" >&2
  head -5 "$work/rules.diff" >&2
  exit 1
fi
