#!/usr/bin/env bash
# Optimizer figures on ResNet-50 exported from torchvision (random weights,
# opset 13, batch 1): `taso optimize` with backtracking and with equality
# saturation, costs measured on this machine's cpu backend (oneDNN), rules
# from a size-3 generation + verification of TASO's default spec (made once
# in WORK if RULES is not given).
#   bench/optimize_run.sh [TIME_LIMIT_S] [RULES.pb] [WORK_DIR]
set -euo pipefail
limit=${1:-60}
rules=${2:-}
work=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso >/dev/null 2>&1
taso="$root/bazel-bin/cli/taso"
mkdir -p "$work"
[ -f "$work/resnet50.onnx" ] || /usr/bin/python3 models/export_torchvision.py resnet50 "$work/resnet50.onnx"
if [ -z "$rules" ]; then
  rules="$work/rules.pb"
  if [ ! -f "$rules" ]; then
    "$taso" generate --max-ops 3 --shards 2 --db "$work/db" >/dev/null
    "$taso" verify --db "$work/db" >/dev/null
    "$taso" rules export --db "$work/db" --format proto -o "$rules" 2>/dev/null
  fi
fi
field() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2-; }
for search in backtrack eqsat; do
  "$taso" optimize "$work/resnet50.onnx" -o "$work/resnet50.$search.onnx" --rules "$rules" --search "$search" \
    --backend cpu --cache-dir "$work/costs" --time-limit "$limit" --json >"$work/$search.json" 2>"$work/$search.err" ||
    { echo "$search: exit $? $(cat "$work/$search.err")"; continue; }
  r="$work/$search.json"
  echo "$search: cost $(field cost_before_ms <"$r") -> $(field cost_after_ms <"$r") ms;" \
    "operators $(field nodes_before <"$r") -> $(field nodes_after <"$r");" \
    "search $(field search_time_ms <"$r") ms, total $(field total_time_ms <"$r") ms;" \
    "stop: $(field stop_detail <"$r"); verified $(field verified_numerically <"$r")"
  /usr/bin/python3 -c "import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1])); print('  onnx checker: ok')" \
    "$work/resnet50.$search.onnx"
done
echo "(work dir: $work)"
