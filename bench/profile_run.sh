#!/usr/bin/env bash
# Profiler figures on this machine's cpu backend (oneDNN), -c opt:
#  1. repeatability: one signature (64-channel 56x56 3x3 conv) measured in
#     RUNS fresh processes with no cache; spread = max/min of their medians.
#  2. ResNet-50 (batch 1, 224x224, our IR): every distinct operator measured
#     over RPC by a taso_profiler with an empty cache (cold), then the same
#     request again WARM times (all cached); medians of the request times.
#   bench/profile_run.sh [RUNS] [WARM] [THREADS]
set -euo pipefail
runs=${1:-5}
warm=${2:-11}
threads=${3:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso //bin:taso_profiler >/dev/null 2>&1
taso="$root/bazel-bin/cli/taso"
profiler="$root/bazel-bin/bin/taso_profiler"
work=$(mktemp -d)
trap 'if [ -n "${pid:-}" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
field() { grep -o "\"$1\":[0-9.e+-]*" | head -1 | cut -d: -f2; }

conv='conv2d[stride=1x1,pad=same,act=none](f32[1,64,56,56],f32[64,64,3,3])'
echo "== repeatability: $conv, $runs fresh processes, threads=${threads} (0: all cores)"
medians=()
for i in $(seq 1 "$runs"); do
  m=$("$taso" profile measure "$conv" --cache-dir none --cpu-threads "$threads" --json | field median_ms)
  medians+=("$m")
  echo "  process $i: median $m ms"
done
printf '%s\n' "${medians[@]}" | awk 'NR==1{lo=$1;hi=$1} {if($1<lo)lo=$1; if($1>hi)hi=$1}
  END {printf "  spread (max/min of medians): %.3f  [target <= 1.15]\n", hi/lo}'

echo "== ResNet-50 over RPC (taso_profiler on loopback, empty cache)"
"$profiler" --listen 127.0.0.1:0 --port_file "$work/port" --cache_dir "$work/costs" --threads "$threads" \
  >"$work/profiler.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
addr="127.0.0.1:$(cat "$work/port")"
"$taso" profile graph resnet50 --server "$addr" --json >"$work/cold.json"
echo "  cold: $(field distinct <"$work/cold.json") distinct of $(field operators <"$work/cold.json") operators" \
  "measured in $(field request_ms <"$work/cold.json") ms [target <= 60000];" \
  "graph cost $(field total_ms <"$work/cold.json") ms"
for i in $(seq 1 "$warm"); do
  "$taso" profile graph resnet50 --server "$addr" --json | field request_ms
done >"$work/warm.txt"
echo "  warm: median MeasureBatch $(median <"$work/warm.txt") ms over $warm requests" \
  "(min $(sort -g "$work/warm.txt" | head -1), max $(sort -g "$work/warm.txt" | tail -1)) [target <= 50]"
"$taso" profile graph resnet50 --server "$addr" --json | grep -q "\"from_cache\":$(field distinct <"$work/cold.json")," ||
  echo "  WARNING: the warm request was not served entirely from the cache"
"$taso" profile graph resnet50 --backend analytic --server "$addr" --json >"$work/analytic.json"
echo "  analytic estimate of the same graph (roofline of this cpu): $(field total_ms <"$work/analytic.json") ms"
