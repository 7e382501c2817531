#!/usr/bin/env bash
# What one more operator costs beyond its kernel, in ONNX Runtime and in our
# whole-graph runner: a chain of N Tanh nodes on a tiny tensor against a chain
# of 1, timed interleaved; (t(N) - t(1)) / (N - 1) is dispatch overhead plus a
# ~64-element kernel. This is the per-node term the cpu graph cost model's
# calibration (`per_node_ms`) stands for.
#   WORK=DIR [N=401] [THREADS=1] bench/node_overhead.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mkdir -p "${WORK:?set WORK=DIR}" && cd "$WORK" && pwd)
n=${N:-401}
threads=${THREADS:-1}
source bench/bench_env.sh
bench_taso
bench_ort_deps

/usr/bin/python3 - "$work" "$n" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
work, n = sys.argv[1], int(sys.argv[2])
for count in (1, n):
    nodes, prev = [], "x"
    for i in range(count):
        out = "y" if i == count - 1 else f"t{i}"
        nodes.append(helper.make_node("Tanh", [prev], [out]))
        prev = out
    graph = helper.make_graph(nodes, f"tanh_chain_{count}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, f"{work}/tanh_chain_{count}.onnx")
PY

# Exit 1 is the expected output mismatch (tanh applied once vs N times).
rc=0
node bench/ort/run.js --levels all --threads "$threads" --min-runs 200 --min-seconds 3 \
  one="$work/tanh_chain_1.onnx" many="$work/tanh_chain_$n.onnx" >"$work/ort.json" || rc=$?
((rc <= 1)) || { echo "node_overhead: onnxruntime failed (exit $rc)" >&2; exit 1; }
for count in 1 "$n"; do
  "$taso" profile graph "$work/tanh_chain_$count.onnx" --measure --repetitions 200 --bypass-cache --backend cpu \
    --cache-dir none --json >"$work/runner_$count.json"
done
node - "$work" "$n" <<'JS'
const fs = require('fs');
const [work, n] = [process.argv[2], Number(process.argv[3])];
const ort = JSON.parse(fs.readFileSync(`${work}/ort.json`, 'utf8'));
const median = (label) => {
  const r = (ort.results || ort.configs || []).find((c) => c.label === label || c.model === label);
  return r ? (r.median_ms ?? r.medianMs) : NaN;
};
const runner = (c) => JSON.parse(fs.readFileSync(`${work}/runner_${c}.json`, 'utf8')).measured_ms;
const per = (a, b) => ((b - a) / (n - 1) * 1000).toFixed(2);
console.log(`ONNX Runtime (level all): chain of 1 ${median('one').toFixed(4)} ms, of ${n} ${median('many').toFixed(4)} ms: ` +
            `${per(median('one'), median('many'))} us per extra node`);
console.log(`whole-graph runner: chain of 1 ${runner(1).toFixed(4)} ms, of ${n} ${runner(n).toFixed(4)} ms: ` +
            `${per(runner(1), runner(n))} us per extra node`);
JS
