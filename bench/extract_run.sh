#!/usr/bin/env bash
# ILP extraction on the e-graphs equality saturation builds for ResNet-50 and
# Inception-v3 (torchvision exports, cpu costs): `taso optimize --search
# eqsat` writes each extraction problem (TASO_ILP_DUMP) and reports its peak
# RSS, then bench/extract_bench solves the problems again under the model
# ExtractIlp had before ("old") and the current one, each in its own process.
#   bench/extract_run.sh RULES.pb [WORK_DIR] [CONFIGS] [TIME_LIMIT_S]
# WORK_DIR holds (or gets) resnet50.onnx, inception_v3.onnx and the cost
# cache (costs/); CONFIGS is extract_bench's --configs (default 'old;lo').
set -euo pipefail
rules=${1:?give the rules file (taso rules export --format proto)}
work=${2:-$(mktemp -d)}
configs=${3:-old;lo}
limit=${4:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso //bench:extract_bench >/dev/null 2>&1
bin="$root/bazel-out/k8-opt/bin"
mkdir -p "$work"
for model in resnet50 inception_v3; do
  [ -f "$work/$model.onnx" ] || /usr/bin/python3 models/export_torchvision.py "$model" "$work/$model.onnx"
  TASO_ILP_DUMP="$work/$model.prob" /usr/bin/time -f '%M' -o "$work/$model.rss" \
    "$bin/cli/taso" optimize "$work/$model.onnx" -o "$work/$model.eqsat.onnx" --rules "$rules" --search eqsat \
    --backend cpu --cache-dir "$work/costs" --json >"$work/$model.json" 2>"$work/$model.err" ||
    { echo "$model: exit $? $(cat "$work/$model.err")"; continue; }
  echo "== $model: taso optimize peak RSS $(($(tail -1 "$work/$model.rss") / 1024)) MB;" \
    "$(grep -o '"stop_detail":"[^"]*"' "$work/$model.json")"
  "$bin/bench/extract_bench" --problem "$work/$model.prob" --configs "$configs" --time_limit "$limit"
done
echo "(work dir: $work)"
