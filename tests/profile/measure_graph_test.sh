#!/usr/bin/env bash
# MeasureGraph over real gRPC between real processes: `taso profile graph
# FILE --measure --server` runs the whole graph in taso_profiler and prints it
# beside the per-operator sum; the second call is answered from the cache with
# the same figure, --bypass-cache measures again, and a server limit gives a
# clear INVALID_ARGUMENT.
source tests/generate/lib.sh
source tests/profile/lib.sh

# x -> conv(relu) -> add x -> relu
cat >"$WORK/graph.txt" <<'GRAPH'
nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: [1, 16, 28, 28] } }
nodes { id: 1 kind: OP_WEIGHT name: "w" type { dtype: DTYPE_FLOAT32 dims: [16, 16, 3, 3] } }
nodes { id: 2 kind: OP_CONV2D params { conv2d { stride_h: 1 stride_w: 1 activation: ACTIVATION_RELU } }
        inputs { node: 0 } inputs { node: 1 } }
nodes { id: 3 kind: OP_EW_ADD inputs { node: 2 } inputs { node: 0 } }
nodes { id: 4 kind: OP_RELU inputs { node: 3 } }
outputs { name: "y" tensor { node: 4 } }
GRAPH

# Our oneDNN whole-graph runner (the server's own default is ort, which runs 5 kernels here).
start_profiler --backend cpu --graph_runs 6 --graph_min_timed_ms 2
"$TASO" profile graph "$WORK/graph.txt" --measure --server "$ADDR" >"$WORK/first.txt" ||
  fail "first measure: $(cat "$WORK/first.txt")"
grep -q "measured whole graph: [0-9.]* ms median" "$WORK/first.txt" || fail "no measured time: $(cat "$WORK/first.txt")"
grep -q "per-operator sum" "$WORK/first.txt" || fail "no per-operator sum beside it: $(cat "$WORK/first.txt")"
grep -q "3 kernels" "$WORK/first.txt" || fail "expected 3 kernels: $(cat "$WORK/first.txt")"
grep "measured whole graph" "$WORK/first.txt" | grep -q "cached" && fail "a first measurement claims to be cached"
"$TASO" profile graph "$WORK/graph.txt" --measure --server "$ADDR" --json >"$WORK/second.json" ||
  fail "second measure: $(cat "$WORK/second.json")"
grep -q '"measured_from_cache":true' "$WORK/second.json" || fail "second call not from the cache: $(cat "$WORK/second.json")"
first_ms=$(grep -o 'measured whole graph: [0-9.]*' "$WORK/first.txt" | grep -o '[0-9.]*$')
second_ms=$(grep -o '"measured_ms":[0-9.e-]*' "$WORK/second.json" | cut -d: -f2)
awk -v a="$first_ms" -v b="$second_ms" 'BEGIN { exit !(a > 0 && (a - b < 0.0005 && b - a < 0.0005)) }' ||
  fail "the cached figure ($second_ms) is not the measured one ($first_ms)"
grep -q '"measured_operator_sum_ms":[0-9]' "$WORK/second.json" || fail "no operator sum in --json"
check "MeasureGraph over gRPC: measured, then served from the cache with the same figure"

"$TASO" profile graph "$WORK/graph.txt" --measure --bypass-cache --server "$ADDR" --json >"$WORK/third.json" ||
  fail "bypass: $(cat "$WORK/third.json")"
grep -q '"measured_from_cache":false' "$WORK/third.json" || fail "--bypass-cache was served from the cache"
check "--bypass-cache measures the graph again"

# A limit on the server is a clear error at the client.
kill -TERM "$PROFILER_PID"
wait "$PROFILER_PID" || fail "taso_profiler exited non-zero on SIGTERM"
start_profiler --backend cpu --max_graph_nodes 3
set +e
"$TASO" profile graph "$WORK/graph.txt" --measure --bypass-cache --server "$ADDR" >/dev/null 2>"$WORK/limit.err"
code=$?
set -e
[ "$code" = 2 ] && grep -q -- "--max_graph_nodes" "$WORK/limit.err" || fail "node limit: exit $code $(cat "$WORK/limit.err")"
check "a graph over --max_graph_nodes: INVALID_ARGUMENT naming the flag"
kill -TERM "$PROFILER_PID"
wait "$PROFILER_PID" || true
PROFILER_PID=
echo "PASS"
