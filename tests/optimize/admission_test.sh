#!/usr/bin/env bash
# Admission before a request is read (optimizer/optimize_front.h):
# taso_optimizer with one search slot and one queue place. While the slot is
# held (the call's search waits on a profiler stopped with SIGSTOP), a
# 300 MiB call waits in the queue unread and two more are refused with
# RESOURCE_EXHAUSTED unread: the optimizer's peak RSS grows by less than
# 64 MiB. Released, the queued call is read (the peak then grows by its
# size, which shows the measure sees a read) and answered, and the server
# optimizes a real model again. Real processes on loopback.
source tests/generate/lib.sh
source tests/profile/lib.sh
BIG="$PWD/tests/optimize/big_request"
HERE="$PWD/tests/optimize"
mkdir -p "$WORK/models"
trap 'for p in "${PROFILER_PID:-}" "${OPT_PID:-}"; do [ -n "$p" ] && { kill -CONT "$p"; kill -9 "$p"; } 2>/dev/null; done; true' EXIT
/usr/bin/python3 "$HERE/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"

start_profiler
PROFILER_ADDR=$ADDR
start_optimizer --profiler "$PROFILER_ADDR" --max_concurrent 1 --max_queued 1 --max_model_mb 1000
peak_mib() { awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$OPT_PID/status"; }

# The slot: a call whose search waits on its first measurement.
kill -STOP "$PROFILER_PID"
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/held.onnx" --server "$OPT_ADDR" --backend analytic \
  --time-limit 10 >"$WORK/held.out" 2>&1 &
HELD_PID=$!
sleep 2
kill -0 "$HELD_PID" 2>/dev/null || fail "the first call finished while the profiler was held: $(cat "$WORK/held.out")"
before=$(peak_mib)

"$BIG" "$OPT_ADDR" 300 >"$WORK/queued.out" 2>&1 &
QUEUED_PID=$!
sleep 2
kill -0 "$QUEUED_PID" 2>/dev/null || fail "the queued call was answered while the slot was held: $(cat "$WORK/queued.out")"
"$BIG" "$OPT_ADDR" 300 >"$WORK/refused1.out" 2>&1 &
r1=$!
"$BIG" "$OPT_ADDR" 300 >"$WORK/refused2.out" 2>&1 &
r2=$!
wait "$r1" "$r2"
for f in refused1 refused2; do
  grep -q "^RESOURCE_EXHAUSTED .*--max_concurrent 1 --max_queued 1" "$WORK/$f.out" ||
    fail "$f: $(cat "$WORK/$f.out")"
done
unread=$(($(peak_mib) - before))
[ "$unread" -lt 64 ] ||
  fail "one 300 MiB call queued and two refused grew the optimizer's peak RSS by $unread MiB: they were read"
check "slot held: a 300 MiB call queued and two refused ($(cut -d' ' -f1-3 "$WORK/refused1.out")), peak RSS +$unread MiB"

kill -CONT "$PROFILER_PID"
wait "$HELD_PID" || fail "the held call failed: $(cat "$WORK/held.out")"
wait "$QUEUED_PID"
grep -q "^RESOURCE_EXHAUSTED\|^OK" "$WORK/queued.out" &&
  fail "the queued call (zeros, not a model) was not read and judged: $(cat "$WORK/queued.out")"
read_mib=$(($(peak_mib) - before))
[ "$read_mib" -ge 250 ] || fail "the queued call was answered ($(cat "$WORK/queued.out")) but the peak grew by only $read_mib MiB"
check "released: the queued call was read once admitted (peak +$read_mib MiB) and answered: $(cut -c1-60 "$WORK/queued.out")"

"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/after.onnx" --server "$OPT_ADDR" --backend analytic \
  --time-limit 5 -q >"$WORK/after.out" 2>&1 || fail "a call after the others: $(cat "$WORK/after.out")"
check "then a real model is optimized again"
echo PASS
