#!/usr/bin/env bash
# The profiler in the fault matrix, real processes on loopback: a connection
# reset while a measurement is in flight, SIGTERM with a measurement in flight
# (drained: the call gets its figure and it is cached), and a full cache disk
# (figures still served, the failure logged; after space is freed and a
# restart, every figure cached before is there). (kill -9 and an idle
# SIGTERM: tests/profile/profile_service_test.sh.)
source tests/generate/lib.sh
source tests/profile/lib.sh
source tests/faults/lib.sh

# Every profiler here runs the cpu backend: ONNX Runtime (a server's own
# default) times 16 weight copies a run, so SLOW would take it minutes. Part 2
# SIGTERMs a measurement of SLOW in flight (about 8 s alone, several times that
# beside other tests), so the profiler drains for up to 120 s.
SMALL='relu(f32[1,16,14,14])'
SLOW='conv2d[stride=1x1,pad=same,act=relu](f32[8,64,56,56],f32[64,64,3,3])'
FLAG="$WORK/disk-full"
export $(full_disk_env "$WORK/costs" "$FLAG")
start_profiler --backend cpu --drain_seconds 120
FAULT_PIDS+=("$PROFILER_PID")
unset LD_PRELOAD TASO_FULL_DISK_DIR TASO_FULL_DISK_FLAG
"$TASO" profile measure "$SMALL" --server "$ADDR" >"$WORK/small.txt" || fail "first measure: $(cat "$WORK/small.txt")"

# 1. A connection reset while the call waits on a held profiler: the client
# gets a clear error or (if it retried) the figure; the profiler lives on.
start_proxy profiler-proxy "$ADDR"
kill -STOP "$PROFILER_PID"
set +e
"$TASO" profile measure 'relu(f32[1,32,7,7])' --server "$PROXY_ADDR" >"$WORK/dropped.out" 2>&1 &
client=$!
sleep 1
dropped=$(drop_connections profiler-proxy "$PROXY_PID")
kill -CONT "$PROFILER_PID"
wait "$client"
code=$?
set -e
[ "$dropped" -gt 0 ] || fail "no connection was open to drop"
case "$code" in
  0) grep -q "ms median" "$WORK/dropped.out" || fail "exit 0 without a figure: $(cat "$WORK/dropped.out")" ;;
  3) grep -qi "unreachable\|unavailable\|reset\|closed" "$WORK/dropped.out" ||
       fail "the error does not say the connection failed: $(cat "$WORK/dropped.out")" ;;
  *) fail "dropped connection: exit $code: $(cat "$WORK/dropped.out")" ;;
esac
kill -0 "$PROFILER_PID" 2>/dev/null || fail "the profiler died: $(tail -3 "$WORK/profiler.log")"
"$TASO" profile measure 'relu(f32[1,32,7,7])' --server "$PROXY_ADDR" >"$WORK/again.out" 2>&1 ||
  fail "measuring again through the proxy: $(cat "$WORK/again.out")"
check "connection reset mid-call: exit $code ($(head -c 100 "$WORK/dropped.out" | tr '\n' ' ')); the profiler serves on"

# 2. SIGTERM during a measurement of a few seconds: it is finished, answered
# and cached, and the server exits 0.
"$TASO" profile measure "$SLOW" --server "$ADDR" --repetitions 400 --json >"$WORK/slow.json" 2>"$WORK/slow.err" &
client=$!
# (The profiler logs a call when it ends: the test gives the call 2 s to be in flight.)
sleep 2
kill -0 "$client" 2>/dev/null || fail "the measurement finished before SIGTERM (make it slower): $(cat "$WORK/slow.json")"
kill -TERM "$PROFILER_PID"
wait "$client" || fail "the call in flight failed on SIGTERM: $(cat "$WORK/slow.err")"
grep -q '"median_ms"' "$WORK/slow.json" || fail "no figure for the drained call: $(cat "$WORK/slow.json")"
wait "$PROFILER_PID" || fail "the profiler exited $? on SIGTERM: $(tail -3 "$WORK/profiler.log")"
check "SIGTERM with a measurement in flight: answered ($(grep -o '"median_ms":[0-9.]*' "$WORK/slow.json")), exit 0"

# 3. The cache's disk fills: new figures are still served, and the failed
# write is logged; after space is freed and a restart, nothing cached before
# is lost (the drained measurement among it).
export $(full_disk_env "$WORK/costs" "$FLAG")
start_profiler --backend cpu
FAULT_PIDS+=("$PROFILER_PID")
unset LD_PRELOAD TASO_FULL_DISK_DIR TASO_FULL_DISK_FLAG
"$TASO" profile measure "$SMALL" "$SLOW" --server "$ADDR" >"$WORK/restarted.txt" || fail "after the restart"
[ "$(grep -c ', cached' "$WORK/restarted.txt")" = 2 ] || fail "figures lost across SIGTERM: $(cat "$WORK/restarted.txt")"
touch "$FLAG"
NEW='relu(f32[1,8,5,5])'
"$TASO" profile measure "$NEW" --server "$ADDR" >"$WORK/full.txt" 2>&1 || fail "measuring on a full disk: $(cat "$WORK/full.txt")"
grep -q "ms median" "$WORK/full.txt" || fail "no figure on a full disk: $(cat "$WORK/full.txt")"
wait_for_line "$WORK/profiler.log" "disk is full" 50 || fail "the failed cache write was not logged: $(tail -3 "$WORK/profiler.log")"
kill -0 "$PROFILER_PID" 2>/dev/null || fail "the profiler died on a full disk"
check "full cache disk: the figure served, the failed write logged"
rm -f "$FLAG"
kill -TERM "$PROFILER_PID"
wait "$PROFILER_PID" || fail "the profiler exited $? on SIGTERM after the full disk: $(tail -3 "$WORK/profiler.log")"
start_profiler --backend cpu
FAULT_PIDS+=("$PROFILER_PID")
"$TASO" profile measure "$SMALL" "$SLOW" "$NEW" --server "$ADDR" >"$WORK/freed.txt" || fail "after freeing space"
[ "$(grep -c ', cached' "$WORK/freed.txt")" = 2 ] || fail "want the two earlier figures cached, the new one measured: $(cat "$WORK/freed.txt")"
"$TASO" profile measure "$NEW" --server "$ADDR" | grep -q "cached" || fail "the new figure is not cached once space is back"
check "space freed, restarted: the earlier figures were kept, the new one measured and cached"
echo "PASS"
