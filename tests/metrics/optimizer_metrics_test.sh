#!/usr/bin/env bash
# taso_optimizer with --metrics_listen: after one `taso optimize --server` its
# /metrics counts the Optimize call, the admission gate's admission and the
# finished search (time, graph size, stop reason).
source tests/generate/lib.sh
source tests/profile/lib.sh
source tests/metrics/lib.sh
OPTIMIZER="$PWD/bin/taso_optimizer"
mkdir -p "$WORK/models"
trap 'for p in "${PROFILER_PID:-}" "${OPT_PID:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done; true' EXIT
/usr/bin/python3 tests/optimize/make_models.py "$WORK/models" || fail "making test models (needs python3-onnx)"

start_profiler
"$OPTIMIZER" --listen 127.0.0.1:0 --port_file "$WORK/opt.port" --profiler "$ADDR" --metrics_listen 127.0.0.1:0 \
  >"$WORK/optimizer.log" 2>&1 &
OPT_PID=$!
for _ in $(seq 1 100); do [ -s "$WORK/opt.port" ] && break; sleep 0.1; done
[ -s "$WORK/opt.port" ] || fail "taso_optimizer did not start: $(cat "$WORK/optimizer.log")"
PORT=$(metrics_port taso_optimizer "$WORK/optimizer.log")
[ -n "$PORT" ] || fail "the optimizer did not say where metrics are: $(cat "$WORK/optimizer.log")"
scrape "$PORT" >"$WORK/before.txt"
grep -q "^taso_optimizer_admitted_total 0$" "$WORK/before.txt" || fail "admitted before: $(cat "$WORK/before.txt")"

"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/out.onnx" --server "127.0.0.1:$(cat "$WORK/opt.port")" \
  --backend analytic --time-limit 5 --json >"$WORK/out.json" 2>"$WORK/out.err" || fail "optimize: $(cat "$WORK/out.err")"

scrape "$PORT" >"$WORK/after.txt"
grep -Eq '^taso_rpc_requests_total\{method="/[a-z.]+\.Optimizer/Optimize",code="OK"\} 1$' "$WORK/after.txt" ||
  fail "request counter: $(grep rpc_requests "$WORK/after.txt")"
grep -q "^taso_optimizer_admitted_total 1$" "$WORK/after.txt" || fail "admitted: $(grep optimizer_ "$WORK/after.txt")"
grep -q "^taso_optimizer_searches_running 0$" "$WORK/after.txt" || fail "running: $(grep optimizer_ "$WORK/after.txt")"
grep -Eq '^taso_optimizer_searches_total\{search="[a-z]+",stop_reason="[a-z_]+"\} 1$' "$WORK/after.txt" ||
  fail "searches: $(grep optimizer_searches "$WORK/after.txt")"
grep -Eq '^taso_optimizer_search_seconds_count\{search="[a-z]+"\} 1$' "$WORK/after.txt" ||
  fail "search seconds: $(grep search_seconds "$WORK/after.txt")"
grep -Eq '^taso_optimizer_last_nodes_before [1-9]' "$WORK/after.txt" || fail "nodes: $(grep nodes "$WORK/after.txt")"
grep -Eq '^taso_optimizer: /[a-z.]+\.Optimizer/Optimize OK [0-9.]+ ms ' "$WORK/optimizer.log" ||
  fail "no log line for the call: $(tail -3 "$WORK/optimizer.log")"
check "one Optimize call: counted, admitted, its search recorded and logged"
echo PASS
