#!/usr/bin/env bash
# A model with its weight in an external file through `taso optimize`, the
# way a model over 2 GiB goes (bench/large_model.sh runs one of 2.1 GiB):
# the weight read from beside the model, the candidate exported with its data
# in a file of its own, both models run in ONNX Runtime as files by path, and
# the output written as OUT.onnx and OUT.onnx.data. The data counts toward
# --max-model-mb. Needs node and profiler/ort's onnxruntime-node
# (deploy/setup.sh): without them the runtime check is not run and this fails.
source tests/generate/lib.sh

/usr/bin/python3 tests/optimize/make_large_model.py "$WORK/m" --weight-mb 8 >/dev/null || fail "make_large_model.py"
mkdir -p "$WORK/out"
"$TASO" optimize "$WORK/m/large.onnx" -o "$WORK/out/out.onnx" --json -q >"$WORK/report.json" 2>"$WORK/err" ||
  fail "taso optimize: $(cat "$WORK/report.json" "$WORK/err")"
/usr/bin/python3 - "$WORK" <<'PY' || fail "the optimized model with external data"
import json, os, sys
import numpy as np
import onnx
from onnx import numpy_helper
work = sys.argv[1]
report = json.load(open(f"{work}/report.json"))
# What the search saw, for a failure in CI: the costs are measured, so noise can change its path.
seen = {k: report.get(k) for k in ("measurement_detail", "cost_device", "cost_baseline_ms", "candidate_cost_ms",
                                    "rules_applied", "stop_detail")}
assert report["measurement"] == "MEASURED_KEPT_CANDIDATE", seen
assert report["runtime_check_detail"].startswith("equal in ONNX Runtime on 4 outputs"), report["runtime_check_detail"]
assert report["check_detail"].startswith("equal"), report["check_detail"]
assert os.path.getsize(f"{work}/out/out.onnx") < 64 << 10, "the weight is inline"
assert os.path.getsize(f"{work}/out/out.onnx.data") >= os.path.getsize(f"{work}/m/large.weights")
before = onnx.load(f"{work}/m/large.onnx")
after = onnx.load(f"{work}/out/out.onnx")  # reads out.onnx.data
w = numpy_helper.to_array(before.graph.initializer[0])
weights = {t.name: numpy_helper.to_array(t) for t in after.graph.initializer}
assert any(v.shape == w.shape and np.array_equal(v, w) for v in weights.values()), "the weight changed"
ops = sorted(n.op_type for n in after.graph.node)
# The four steps batched: into one product, or two pairs when the measured costs lead the search there.
assert ops.count("MatMul") in (1, 2), (ops, seen)
PY
check "external data: read by reference, the steps batched, both files run in ONNX Runtime, the output's weight in out.onnx.data"

# The other commands that read a model read its data too.
"$TASO" rules match "$WORK/m/large.onnx" --rules rules/default_rules.pb --json >"$WORK/match.json" 2>"$WORK/match.err" ||
  fail "taso rules match on a model with external data: $(cat "$WORK/match.err")"
"$TASO" profile graph "$WORK/m/large.onnx" --backend analytic >"$WORK/profile.txt" 2>&1 ||
  fail "taso profile graph on a model with external data: $(cat "$WORK/profile.txt")"
check "taso rules match and taso profile graph read the model's external data"

code=0
"$TASO" optimize "$WORK/m/large.onnx" -o "$WORK/out/small.onnx" --max-model-mb 4 -q >"$WORK/cap.out" 2>"$WORK/cap.err" ||
  code=$?
[[ $code -eq 2 ]] || fail "--max-model-mb 4 on an 8 MiB model: exit $code, not 2"
grep -q "over 4 MiB (the limit on model size)" "$WORK/cap.err" || fail "the cap's message: $(cat "$WORK/cap.err")"
[[ -e "$WORK/out/small.onnx" ]] && fail "a refused model wrote its output"
check "--max-model-mb counts the external data: an 8 MiB weight over a 4 MiB cap exits 2"
