#!/usr/bin/env bash
# The tools behind bench/fused_kernels.sh on the small transformer layer: bench/ort/fused_variants.py
# writes each fused form with the operators it names in place of the ones they fuse, every form computes
# the layer's outputs in ONNX Runtime (bench/ort/speedup.js checks them), and bench/ort/node_profile.js
# times the fused kernels node by node. Needs node, bench/ort's onnxruntime-node and /usr/bin/python3
# with onnx (deploy/setup.sh installs them); fails, naming what is missing, without them.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || fail "node is not on PATH (deploy/setup.sh expects node 20 for bench/)"
/usr/bin/python3 -c "import onnx" || fail "/usr/bin/python3 cannot import onnx: run deploy/setup.sh"
# The scripts load onnxruntime-node from beside them in the source tree, not from the runfiles.
ort_dir=$(dirname "$(readlink -f bench/ort/speedup.js)")
[[ -f $ort_dir/node_modules/onnxruntime-node/package.json ]] ||
  fail "onnxruntime-node is not installed in $ort_dir/node_modules: run deploy/setup.sh (npm ci in bench/ort)"
tmp=${TEST_TMPDIR:-$(mktemp -d)}

/usr/bin/python3 models/build_structures.py transformer_layer "$tmp/layer.onnx" --small >/dev/null
mkdir -p "$tmp/layer" "$tmp/block"
/usr/bin/python3 bench/ort/fused_variants.py "$tmp/layer.onnx" "$tmp/layer" >/dev/null
/usr/bin/python3 bench/ort/fused_variants.py --block "$tmp/layer.onnx" "$tmp/block" >/dev/null
[[ ! -f $tmp/block/fused.onnx && -f $tmp/block/attention.onnx ]] || fail "--block writes base, mha and attention only"

# Operator counts per form: what each fuses is gone, its fused operator is there.
/usr/bin/python3 - "$tmp" <<'EOF' || fail "operator counts (above)"
import collections, sys, onnx
tmp = sys.argv[1]
def ops(path):
    return collections.Counter(n.op_type for n in onnx.load(path).graph.node)
want = {
    "layer/base": {"Softmax": 1, "ReduceMean": 4, "MatMul": 8},
    "layer/mha": {"MultiHeadAttention": 1, "Softmax": 0, "Transpose": 0, "MatMul": 6, "ReduceMean": 4},
    "layer/attention": {"Attention": 1, "Softmax": 0, "MatMul": 3},
    "layer/skip_layer_norm": {"SkipLayerNormalization": 2, "ReduceMean": 0, "Sqrt": 0, "Softmax": 1},
    "layer/fused": {"Attention": 1, "SkipLayerNormalization": 2, "ReduceMean": 0, "Softmax": 0, "MatMul": 3},
    "block/base": {"Softmax": 1, "ReduceMean": 0, "MatMul": 5},
    "block/attention": {"Attention": 1, "MatMul": 0},
}
bad = []
for name, counts in want.items():
    got = ops("%s/%s.onnx" % (tmp, name))
    bad += ["%s: %d %s, want %d" % (name, got[op], op, n) for op, n in counts.items() if got[op] != n]
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

quick=(--passes 2 --min-runs 2 --min-seconds 0 --warmup 1)
rc=0
node bench/ort/speedup.js "${quick[@]}" "$tmp/layer/base.onnx" mha="$tmp/layer/mha.onnx" \
  attention="$tmp/layer/attention.onnx" skip_layer_norm="$tmp/layer/skip_layer_norm.onnx" \
  fused="$tmp/layer/fused.onnx" >"$tmp/speedup.json" || rc=$?
[[ $rc -eq 0 ]] || fail "speedup.js exit $rc: $(head -c 2000 "$tmp/speedup.json")"
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const labels = d.checks.filter((c) => c.ok).map((c) => c.label).sort().join();
if (labels !== "attention,fused,mha,skip_layer_norm" || !d.outputs_match) throw new Error("checks: " + JSON.stringify(d.checks));
for (const c of d.candidates) if (!(c.speedup > 0) || c.ratios.length !== 2) throw new Error("timing: " + c.label);' \
  "$tmp/speedup.json" || fail "a fused form's outputs differ from the layer's, or it was not timed"

node bench/ort/node_profile.js --runs 3 --warmup 1 --json "$tmp/layer/fused.onnx" >"$tmp/profile.json" ||
  fail "node_profile.js failed"
node -e '
const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const ops = p.by_op.map((o) => o.op);
for (const op of ["Attention", "SkipLayerNormalization", "Gemm"]) if (!ops.includes(op)) throw new Error("no " + op + ": " + ops);
const sum = p.nodes.reduce((s, n) => s + n.median_us, 0);
if (!(sum > 0) || Math.abs(sum - p.kernel_sum_us) > 1e-6 || p.runs !== 3) throw new Error("sums: " + sum + " " + p.kernel_sum_us);' \
  "$tmp/profile.json" || fail "node_profile.js: $(head -c 2000 "$tmp/profile.json")"
node bench/ort/node_profile.js --runs 0 "$tmp/layer/base.onnx" 2>"$tmp/usage.err" && fail "--runs 0 accepted"
grep -q "runs must be at least 1" "$tmp/usage.err" || fail "--runs 0: $(cat "$tmp/usage.err")"
echo "PASS"
