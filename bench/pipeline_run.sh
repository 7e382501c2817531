#!/usr/bin/env bash
# The discovery pipeline end to end, as the quick start runs it, with the
# figures issue 39 asks for: wall time of each step, peak RSS summed over
# every pipeline process (and each process's own peak), peak disk.
#   bench/pipeline_run.sh MAX_OPS [DB_DIR]
# Steps: taso generate --max-ops MAX_OPS --shards 2, taso verify --workers 2 --noprune,
# taso rules prune (streaming). Set TASO to a prebuilt `taso` (with its
# ../bin servers beside it) to time a fixed build; otherwise builds -c opt.
# KEEP_GENERATED, FROM_GENERATED, KEEP_VERIFIED: see below.
# Prints one line per step and a summary; the rule count is the pruned table.
set -euo pipefail
max_ops=${1:?usage: bench/pipeline_run.sh MAX_OPS [DB_DIR]}
db=${2:-$(mktemp -d)/db}
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z "${TASO:-}" ]]; then
  (cd "$root" && bazel build -c opt //cli:taso >/dev/null 2>&1)
  TASO="$root/bazel-bin/cli/taso"
fi
out=$(dirname "$db")/pipeline
mkdir -p "$out"

# Samples once a second until the step's process exits; keeps the peaks.
peak_sum=0; peak_disk=0
declare -A peak_of
sample_until() {
  local pid=$1
  while kill -0 "$pid" 2>/dev/null; do
    local sum=0
    while read -r rss comm; do
      sum=$((sum + rss))
      (( rss > ${peak_of[$comm]:-0} )) && peak_of[$comm]=$rss
    done < <(ps -eo rss=,comm= | awk '$2 ~ /^taso/')
    (( sum > peak_sum )) && peak_sum=$sum
    if [[ -d "$db" ]]; then
      local disk
      # du complains (and exits non-zero) when the store deletes a file it
      # is reading; its total line still counts.
      disk=$( (du -sk "$db" 2>/dev/null || true) | tail -1 | cut -f1)
      (( ${disk:-0} > peak_disk )) && peak_disk=$disk
    fi
    sleep 1
  done
}

step() {
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$TASO" "$@" --json >"$out/$name.json" 2>"$out/$name.err" &
  local pid=$!
  sample_until "$pid"
  wait "$pid" || { echo "$name failed:"; tail -20 "$out/$name.err"; exit 1; }
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  echo "$name: ${secs} s  $(head -c 600 "$out/$name.json" | tr -d '\n')"
  echo "$secs" >"$out/$name.seconds"
}

if [[ -n "${FROM_GENERATED:-}" ]]; then
  # FROM_GENERATED=DIR: a store KEEP_GENERATED kept; generation is not timed.
  rm -rf "$db" && cp -r "$FROM_GENERATED" "$db" && echo 0 >"$out/generate.seconds"
else
  step generate generate --max-ops "$max_ops" --shards 2 --db "$db"
fi
# KEEP_GENERATED=DIR keeps a copy of the generated store (small once its
# graphs are dropped) to time verification again without generating.
if [[ -n "${KEEP_GENERATED:-}" ]]; then rm -rf "$KEEP_GENERATED" && cp -r "$db" "$KEEP_GENERATED"; fi
# --noprune: `taso verify` would prune the same way (stores stopped, streaming); kept as a step of its own
# so that each step is timed apart, as in the earlier results.
step verify verify --db "$db" --workers 2 --noprune
# KEEP_VERIFIED=DIR keeps a copy of the verified store, to time pruning again.
if [[ -n "${KEEP_VERIFIED:-}" ]]; then rm -rf "$KEEP_VERIFIED" && cp -r "$db" "$KEEP_VERIFIED"; fi
step prune rules prune --db "$db"

total=$(cat "$out"/{generate,verify,prune}.seconds | awk '{ s += $1 } END { printf "%.1f", s }')
echo "end to end: ${total} s"
echo "peak RSS summed over the pipeline's processes: $((peak_sum / 1024)) MiB"
for comm in "${!peak_of[@]}"; do echo "  peak RSS of one $comm: $((peak_of[$comm] / 1024)) MiB"; done
echo "peak disk: $((peak_disk / 1024)) MiB in $db"
