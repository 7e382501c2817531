#!/usr/bin/env bash
# A model over the 2 GiB one protobuf message holds, optimized end to end:
# tests/optimize/make_large_model.py writes T steps of x_t @ W with one W of
# WEIGHT_MB (default 2100) in an external file; `taso optimize` reads it,
# batches the steps, checks the result, times both files in ONNX Runtime and
# writes OUT.onnx with OUT.onnx.data. Prints the wall time, the peak memory
# (the taso process; ONNX Runtime's worker is a child of its own), the
# verdicts and the measured speedup, and checks the output's sizes.
#   bench/large_model.sh [WORK_DIR]   (WEIGHT_MB=2100, STEPS=4, OPT=1: -c opt)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
weight_mb=${WEIGHT_MB:-2100}
steps=${STEPS:-4}
mkdir -p "$work/out"
cd "$root"
mode=()
[[ "${OPT:-0}" == 1 ]] && mode=(-c opt)
bazel build "${mode[@]}" //cli:taso >/dev/null 2>&1
taso="$(bazel info "${mode[@]}" bazel-bin 2>/dev/null)/cli/taso"
/usr/bin/python3 tests/optimize/make_large_model.py "$work" --weight-mb "$weight_mb" --steps "$steps"
/usr/bin/time -v "$taso" optimize "$work/large.onnx" -o "$work/out/out.onnx" --json -q \
  >"$work/report.json" 2>"$work/time.txt" || { cat "$work/time.txt"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import json, os, re, sys
work = sys.argv[1]
report = json.load(open(f"{work}/report.json"))
timing = open(f"{work}/time.txt").read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", timing).group(1)
rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing).group(1))
data = os.path.getsize(f"{work}/large.weights")
out_model, out_data = os.path.getsize(f"{work}/out/out.onnx"), os.path.getsize(f"{work}/out/out.onnx.data")
print(f"input: {os.path.getsize(work + '/large.onnx')} bytes + {data} bytes of external data "
      f"({data / 2**30:.2f} GiB{', over the 2 GiB of one message' if data > 2**31 - 1 else ''})")
print(f"output: {out_model} bytes + {out_data} bytes in out.onnx.data")
print(f"wall {wall}, peak RSS {rss_kb / 2**20:.1f} GiB ({rss_kb / 2**10 / (data / 2**20):.1f}x the weights)")
print(f"check: {report.get('check_detail')}")
print(f"runtime check: {report.get('runtime_check_detail')}")
print(f"measurement: {report.get('measurement')}: {report.get('measured_baseline_ms', 0):.1f} ms -> "
      f"{report.get('measured_after_ms', 0):.1f} ms")
assert out_data >= data, "the output's data file is smaller than the weight"
assert out_model < 1 << 20, "the output model holds its weights inline"
PY
