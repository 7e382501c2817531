#!/usr/bin/env bash
# models/build_structures.py, at --small sizes: every structure builds, passes the ONNX checker (the
# script runs it), is byte-for-byte deterministic, and has the shape the benchmarks rely on
# (matmuls sharing an input where a merge should pay, the cells' branches). Needs Debian's
# python3-onnx (deploy/setup.sh installs it).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
src=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}
[[ -f "$src/models/build_structures.py" ]] || src=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TEST_TMPDIR:-$(mktemp -d)}
py=/usr/bin/python3
"$py" -c 'import onnx' || fail "$py cannot import onnx (apt-get install python3-onnx)"
names=$("$py" "$src/models/build_structures.py" --list)
[[ $(wc -w <<<"$names") -eq 5 ]] || fail "want 5 structures, --list gave: $names"
for n in $names; do
  "$py" "$src/models/build_structures.py" "$n" "$tmp/$n.onnx" --small || fail "$n did not build"
  "$py" "$src/models/build_structures.py" "$n" "$tmp/$n.again.onnx" --small
  cmp -s "$tmp/$n.onnx" "$tmp/$n.again.onnx" || fail "$n is not deterministic"
done
"$py" "$src/models/build_structures.py" rnn_cell "$tmp/rnn_b4.onnx" --small --batch 4 --steps 2
"$py" "$src/models/build_structures.py" transformer_layer "$tmp/tl_b2_s8.onnx" --small --batch 2 --seq 8
"$py" "$src/models/build_structures.py" inception_cell "$tmp/ic_b2.onnx" --small --batch 2
for n in transformer_layer rnn_cell nasrnn_cell; do
  "$py" "$src/models/build_structures.py" "$n" "$tmp/$n.merged.onnx" --small --merged || fail "$n --merged did not build"
done
"$py" "$src/models/build_structures.py" bogus "$tmp/x.onnx" 2>/dev/null && fail "an unknown name was accepted"

"$py" - "$tmp" <<'PY'
import collections, sys
import onnx
from onnx import numpy_helper
d = sys.argv[1]
def load(n):
    m = onnx.load("%s/%s.onnx" % (d, n))
    assert m.opset_import[0].version == 13, m.opset_import
    return m.graph
def readers(g, op):  # value -> number of `op` nodes that read it as their first input
    c = collections.Counter(n.input[0] for n in g.node if n.op_type == op)
    return c
def ops(g):
    return collections.Counter(n.op_type for n in g.node)

g = load("transformer_layer")
assert readers(g, "MatMul")["x"] == 3, "Q, K and V must be three MatMuls of the same input"
assert ops(g)["Softmax"] == 1 and ops(g)["Erf"] == 1 and ops(g)["ReduceMean"] == 4, ops(g)
assert [d.dim_value for d in g.input[0].type.tensor_type.shape.dim] == [16, 64]

g = load("rnn_cell")
r = readers(g, "MatMul")
steps = [i.name for i in g.input if i.name.startswith("x")]
assert len(steps) == 3 and all(r[x] == 4 for x in steps), ("four gate MatMuls of each x_t", r)
assert r["h0"] == 4, "four gate MatMuls of h_{t-1}"
assert ops(g)["MatMul"] == 8 * len(steps) and len(g.output) == 2
g = load("rnn_b4")
assert [d.dim_value for d in g.input[0].type.tensor_type.shape.dim] == [4, 32]
assert len([i for i in g.input if i.name.startswith("x")]) == 2

# Batch 2 at sequence 8: the rows are the two sequences' tokens, attention runs per sequence (4-D).
g = load("tl_b2_s8")
assert [d.dim_value for d in g.input[0].type.tensor_type.shape.dim] == [16, 64]
perms = [list(a.ints) for n in g.node if n.op_type == "Transpose" for a in n.attribute if a.name == "perm"]
assert sorted(map(tuple, perms)) == sorted([(0, 2, 1, 3), (0, 2, 3, 1), (0, 2, 1, 3), (0, 2, 1, 3)]), perms
heads = [numpy_helper.to_array(i).tolist() for i in g.initializer if i.name.startswith("heads_shape")]
assert heads == [[2, 8, 4, 16]], heads
g = load("ic_b2")
assert [d.dim_value for d in g.input[0].type.tensor_type.shape.dim] == [2, 16, 8, 8]

g = load("nasrnn_cell")
r = readers(g, "MatMul")
assert r["x0"] == 8 and r["h0"] == 8, r
assert ops(g)["MatMul"] == 16 * 2

g = load("inception_cell")
assert ops(g)["Concat"] == 2 and all(len(n.input) == 4 for n in g.node if n.op_type == "Concat")
assert readers(g, "Conv")["x"] == 3 and readers(g, "MaxPool")["x"] == 1, "four branches on one input"

g = load("nasnet_cell")
groups = [a.i for n in g.node if n.op_type == "Conv" for a in n.attribute if a.name == "group"]
assert any(x > 1 for x in groups), "no depthwise convolution"
assert ops(g)["AveragePool"] == 4 and ops(g)["MaxPool"] == 2 and ops(g)["Concat"] == 2, ops(g)
assert all(len(n.input) == 6 for n in g.node if n.op_type == "Concat")

# --merged: one MatMul per shared input, its parts taken by a Split; the weights are the unmerged
# model's, concatenated (same draws), so the initializers hold the same numbers.
import numpy as np
from onnx import numpy_helper
def weights(g):
    return np.sort(np.concatenate([numpy_helper.to_array(i).ravel() for i in g.initializer
                                   if i.data_type == onnx.TensorProto.FLOAT and i.dims]))
for n, shared, parts in [("transformer_layer", ["x"], 3), ("rnn_cell", ["x0", "x1", "x2", "h0"], 4),
                         ("nasrnn_cell", ["x0", "x1", "h0"], 8)]:
    g, m = load(n), load(n + ".merged")
    r = readers(m, "MatMul")
    assert all(r[v] == 1 for v in shared), (n, r)
    splits = [s for s in m.node if s.op_type == "Split"]
    assert splits and all(len(s.output) == parts for s in splits), (n, ops(m))
    assert np.array_equal(weights(g), weights(m)), n + ": the merged model's weights differ"
PY
echo PASS
