#!/usr/bin/env bash
# A taso_optimizer's serving caps: --max_threads bounds the threads serving
# calls, searching or waiting for a slot (a flood beyond them is refused with
# RESOURCE_EXHAUSTED, exit 3, and the server keeps serving), and
# --max_model_mb past what a gRPC message can carry is refused at start-up.
source tests/generate/lib.sh
OPTIMIZER="$PWD/bin/taso_optimizer"
HERE="$PWD/tests/optimize"
mkdir -p "$WORK/models"
trap 'if [ -n "${OPT_PID:-}" ]; then kill -9 "$OPT_PID" 2>/dev/null || true; fi' EXIT
/usr/bin/python3 "$HERE/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"

set +e
"$OPTIMIZER" --max_model_mb 4096 --rules none >"$WORK/big.out" 2>&1; code=$?
set -e
[ $code -eq 2 ] && grep -q "max_model_mb must be 1 to 2000" "$WORK/big.out" ||
  fail "--max_model_mb 4096: exit $code, $(cat "$WORK/big.out")"
check "--max_model_mb past a gRPC message is refused at start-up (exit 2)"

"$OPTIMIZER" --listen 127.0.0.1:0 --port_file "$WORK/port" --rules none --cache_dir none --max_threads 2 \
  >"$WORK/optimizer.log" 2>&1 &
OPT_PID=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || fail "taso_optimizer did not start: $(cat "$WORK/optimizer.log")"
ADDR="127.0.0.1:$(cat "$WORK/port")"
# Each call is measured end to end (seconds on the cpu backend) and waits for
# one of the optimizer's two search slots: ten at once need more than 2 threads.
pids=()
for i in $(seq 1 10); do
  "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/c$i.onnx" --server "$ADDR" --backend cpu --min-gain 0 \
    --time-limit 5 -q >"$WORK/c$i.out" 2>&1 &
  pids+=($!)
done
refused=0 served=0
for i in $(seq 1 10); do
  if wait "${pids[$((i - 1))]}"; then served=$((served + 1)); else
    code=$?
    [ $code -eq 3 ] && grep -q "busy: 2 calls hold its threads (taso_optimizer --max_threads)" "$WORK/c$i.out" ||
      fail "call $i: exit $code, $(cat "$WORK/c$i.out")"
    refused=$((refused + 1))
  fi
done
[ $refused -gt 0 ] || fail "ten calls at once on 2 threads: none refused"
[ $served -gt 0 ] || fail "ten calls at once on 2 threads: none served ($(cat "$WORK/c1.out"))"
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/after.onnx" --server "$ADDR" --backend analytic \
  --time-limit 5 -q >"$WORK/after.out" 2>&1 || fail "a call after the flood: $(cat "$WORK/after.out")"
check "--max_threads 2: $refused of 10 concurrent calls refused with RESOURCE_EXHAUSTED (exit 3), $served served, then served again"
echo "PASS"
