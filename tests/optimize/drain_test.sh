#!/usr/bin/env bash
# SIGTERM drains: a taso_optimizer told to stop while a call is in flight
# refuses new calls but finishes that one (its search blocked on a profiler
# we hold with SIGSTOP), then exits 0. Real processes on loopback.
source tests/generate/lib.sh
source tests/profile/lib.sh
HERE="$PWD/tests/optimize"
mkdir -p "$WORK/models"
trap 'for p in "${PROFILER_PID:-}" "${OPT_PID:-}"; do [ -n "$p" ] && { kill -CONT "$p"; kill -9 "$p"; } 2>/dev/null; done; true' EXIT
/usr/bin/python3 "$HERE/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"

start_profiler
PROFILER_ADDR=$ADDR
start_optimizer --profiler "$PROFILER_ADDR" --max_time_limit_s 20

# Hold the profiler: the call's search waits on its first measurement.
kill -STOP "$PROFILER_PID"
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/drained.onnx" --server "$OPT_ADDR" --backend analytic \
  --time-limit 10 --json >"$WORK/drained.json" 2>"$WORK/drained.err" &
CLIENT_PID=$!
sleep 2
kill -0 "$CLIENT_PID" 2>/dev/null || fail "the call finished while the profiler was held: $(cat "$WORK/drained.err")"
kill -TERM "$OPT_PID"
for _ in $(seq 1 50); do grep -q "draining" "$WORK/optimizer.log" && break; sleep 0.1; done
grep -q "draining calls in flight for up to 50 s" "$WORK/optimizer.log" ||
  fail "no drain announced (max_time_limit_s + 30): $(cat "$WORK/optimizer.log")"
kill -0 "$OPT_PID" 2>/dev/null || fail "taso_optimizer exited without draining the call in flight"
# A new call while draining is refused.
if "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/late.onnx" --server "$OPT_ADDR" --backend analytic \
  --time-limit 10 >"$WORK/late.out" 2>&1; then
  fail "a call made after SIGTERM was served"
fi
kill -CONT "$PROFILER_PID"
wait "$CLIENT_PID" || fail "the call in flight failed during the drain: $(cat "$WORK/drained.err")"
grep -q '"verified_numerically":true' "$WORK/drained.json" || fail "drained call's result: $(cat "$WORK/drained.json")"
wait "$OPT_PID" || fail "taso_optimizer exited non-zero after draining: $(tail -3 "$WORK/optimizer.log")"
OPT_PID=""
check "SIGTERM: the call in flight finished (checked result), a new call was refused, the server exited 0"
echo PASS
