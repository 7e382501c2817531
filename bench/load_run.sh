#!/usr/bin/env bash
# Load on one taso_optimizer (issue 19): CONCURRENCY clients send Optimize
# calls of a mix of models for SECONDS (backtracking and eqsat in turn, each
# search limited to TIME_LIMIT s), then the figures: completed calls per
# second, latency p50/p99, errors (0 expected) and the server's peak RSS.
#   bench/load_run.sh [SECONDS=120] [CONCURRENCY=4] [WORK_DIR]
# Environment: TIME_LIMIT (2), BACKEND (cpu: costs measured by the embedded
# profiler into WORK/costs, as the server runs by default; or analytic),
# RULES (a rules .pb; default none: structural rules only), MAX_CALLS (the
# server's --max_concurrent; default the server's own, 2).
# The models: the optimizer tests' convrelu, matmuls and computed_shapes, and
# the small configurations of the five hand-built suite structures.
set -euo pipefail
seconds=${1:-120}
concurrency=${2:-4}
work=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //bin:taso_optimizer //bench:optimize_load >/dev/null 2>&1
bin="$root/bazel-bin"
mkdir -p "$work/models"
/usr/bin/python3 tests/optimize/make_models.py "$work/models" >/dev/null
models=("$work/models/convrelu.onnx" "$work/models/matmuls.onnx" "$work/models/computed_shapes.onnx")
for s in transformer_layer rnn_cell nasrnn_cell inception_cell nasnet_cell; do
  /usr/bin/python3 models/build_structures.py "$s" "$work/models/$s.onnx" --small
  models+=("$work/models/$s.onnx")
done
flags=(--listen 127.0.0.1:0 --port_file "$work/port" --cache_dir "$work/costs")
[ -n "${RULES:-}" ] && flags+=(--rules "$RULES")
[ -n "${MAX_CALLS:-}" ] && flags+=(--max_concurrent "$MAX_CALLS")
rm -f "$work/port"
"$bin/bin/taso_optimizer" "${flags[@]}" --log_requests=false >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "taso_optimizer did not start: $(tail -3 "$work/server.log")"; exit 1; }
echo "taso_optimizer (pid $server, ${BACKEND:-cpu} costs, rules: ${RULES:-structural only}); ${#models[@]} models," \
  "$concurrency clients, ${seconds} s, time limit ${TIME_LIMIT:-2} s; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
"$bin/bench/optimize_load" --server "127.0.0.1:$(cat "$work/port")" --models "$(IFS=,; echo "${models[*]}")" \
  --concurrency "$concurrency" --seconds "$seconds" --time_limit_s "${TIME_LIMIT:-2}" --server_pid "$server" \
  --backend "${BACKEND:-cpu}" \
  ${JSON:+--json} || status=$?
echo "(work dir: $work)"
exit "${status:-0}"
