#!/usr/bin/env bash
# Calibrates the cpu graph cost model (costs/graph_cost_model.h) against
# ONNX Runtime: each model is timed in onnxruntime-node (bench/ort/run.js, cpu
# EP, one model per run), its runtime baseline is measured operator by
# operator on our cpu backend (bench:calibration_features), and
# bench/calibrate_fit.js fits per_node_ms and per_mb_ms to what ORT took
# beyond our kernel sum. Prints the fit and writes the calibration file.
#   bench/calibrate.sh [MODEL.onnx ...]      default: every *.onnx in WORK
#   environment:
#     WORK=DIR         logs, timings and features (and the models, when none are given); required
#                      without models. bench/suite or models/export_torchvision.py fill one.
#     OUT=FILE         calibration to write (default profiler/cpu/calibration/cpu_default.json: the
#                      one compiled in; rebuild after)
#     THREADS=1        ORT intraOpNumThreads and our cpu backend's threads
#     LEVEL=all        ORT graphOptimizationLevel (its fusions are what the runtime baseline models)
#     MIN_RUNS=20 MIN_SECONDS=2 WARMUP=3   ORT timed runs per model
#     FEATURES=BINARY  use this calibration_features instead of building it (-c opt)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { echo "calibrate: $*" >&2; }
if [[ -z "${WORK:-}" && $# -eq 0 ]]; then
  log "give models or WORK=DIR holding them"
  exit 2
fi
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/calibrate.XXXXXX")}
mkdir -p "$work/calibration"
work=$(cd "$work" && pwd)
out=${OUT:-profiler/cpu/calibration/cpu_default.json}
threads=${THREADS:-1}
level=${LEVEL:-all}
if (($#)); then models=("$@"); else models=("$work"/*.onnx); fi
[[ -f "${models[0]}" ]] || { log "no models in $work"; exit 2; }

if [[ -n "${FEATURES:-}" ]]; then
  features=$FEATURES
else
  log "building //bench:calibration_features (-c opt)"
  bazel build -c opt //bench:calibration_features >"$work/calibration/build.log" 2>&1 ||
    { tail -20 "$work/calibration/build.log" >&2; exit 1; }
  features="$work/calibration/calibration_features"
  cp -f "$(bazel info -c opt bazel-bin 2>/dev/null)/bench/calibration_features" "$features"
fi
if [[ ! -f bench/ort/node_modules/onnxruntime-node/package.json ]]; then
  log "installing onnxruntime-node (npm ci in bench/ort)"
  (cd bench/ort && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$work/calibration/ort"
for m in "${models[@]}"; do
  name=$(basename "$m" .onnx)
  log "ORT: $name"
  node bench/ort/run.js --levels "$level" --threads "$threads" --min-runs "${MIN_RUNS:-20}" \
    --min-seconds "${MIN_SECONDS:-2}" --warmup "${WARMUP:-3}" "$name=$m" >"$work/calibration/ort/$name.json" ||
    { log "ORT failed on $name (left out)"; rm -f "$work/calibration/ort/$name.json"; }
done
log "our kernels on the runtime baselines"
# The features do not depend on the calibration; 'none' keeps them from a stale one's cache entries.
"$features" --threads "$threads" --calibration none --cache_dir "$work/calibration/costs" "${models[@]}" \
  >"$work/calibration/features.jsonl" || log "some models did not import (left out)"
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
node bench/calibrate_fit.js --features "$work/calibration/features.jsonl" --ort "$work/calibration/ort" \
  --out "$out" --threads "$threads" --level "$level" --command "bench/calibrate.sh $(printf '%q ' "${models[@]##*/}")"
