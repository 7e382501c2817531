#!/usr/bin/env bash
# taso_profiler over loopback with `taso profile` as the client: costs are
# measured once and then served from the cache, the cache survives a restart
# and a SIGKILL, concurrent clients asking for the same new signature get the
# one measurement, and bad signatures fail alone with INVALID_ARGUMENT.
source tests/generate/lib.sh
source tests/profile/lib.sh
CACHE="$WORK/costs"

CONV='conv2d[stride=1x1,pad=same,act=relu](f32[1,16,14,14],f32[16,16,3,3])'
RELU='relu(f32[1,16,14,14])'
start_profiler
grep -q "cpu: .*oneDNN" "$WORK/profiler.log" || fail "the server did not report its cpu backend: $(cat "$WORK/profiler.log")"

"$TASO" profile measure "$CONV" "$RELU" --server "$ADDR" >"$WORK/first.txt" || fail "first measure: $(cat "$WORK/first.txt")"
grep -c "ms median" "$WORK/first.txt" | grep -q 2 || fail "expected two costs: $(cat "$WORK/first.txt")"
grep -q "cached" "$WORK/first.txt" && fail "a first measurement claims to come from the cache"
"$TASO" profile measure "$CONV" "$RELU" --server "$ADDR" >"$WORK/second.txt" || fail "second measure"
[ "$(grep -c ', cached' "$WORK/second.txt")" = 2 ] || fail "second request was not served from the cache: $(cat "$WORK/second.txt")"
# Same figures both times: a hit never re-measures.
diff <(grep -o '[0-9.]* ms median' "$WORK/first.txt") <(grep -o '[0-9.]* ms median' "$WORK/second.txt") >/dev/null ||
  fail "cached figures differ from the measured ones"
check "measured once, then served from the cache"

# One bad entry does not fail the others; exit code 4 says some failed.
set +e
"$TASO" profile measure "$RELU" 'conv2d(f32[1,3,8,8],f32[4,2,3,3])' 'poolmax[kernel=0x3](f32[1,2,4,4])' "$CONV" \
  --server "$ADDR" --json >"$WORK/bad.json" 2>"$WORK/bad.err"
code=$?
set -e
[ "$code" = 4 ] || fail "bad entries: exit $code, want 4 ($(cat "$WORK/bad.err"))"
[ "$(grep -c '"cost"' "$WORK/bad.json")" = 2 ] || fail "the good entries were not answered: $(cat "$WORK/bad.json")"
[ "$(grep -c '"code":3' "$WORK/bad.json")" = 2 ] || fail "bad entries are not INVALID_ARGUMENT (3): $(cat "$WORK/bad.json")"
grep -q "not a multiple of the weight" "$WORK/bad.json" || fail "the shape error does not say why: $(cat "$WORK/bad.json")"
grep -q "kernel sizes must be" "$WORK/bad.json" || fail "the kernel error does not say why"
check "bad signatures: INVALID_ARGUMENT each, with a reason; the good ones measured"

# Unknown operators are refused before anything is sent.
set +e
"$TASO" profile measure 'frobnicate(f32[2])' --server "$ADDR" >/dev/null 2>"$WORK/unknown.err"
code=$?
set -e
[ "$code" = 2 ] && grep -q "unknown operator 'frobnicate'" "$WORK/unknown.err" || fail "unknown op: exit $code $(cat "$WORK/unknown.err")"

# Concurrent clients asking for the same new signature share one measurement.
NEW='conv2d[stride=2x2,pad=same,act=none](f32[1,32,28,28],f32[32,32,3,3])'
clients=()
for i in 1 2 3 4; do
  "$TASO" profile measure "$NEW" --server "$ADDR" --repetitions 40 --json >"$WORK/concurrent.$i" &
  clients+=($!)
done
wait "${clients[@]}"
[ "$(cat "$WORK"/concurrent.* | grep -o '"median_ms":[0-9.e-]*' | sort -u | wc -l)" = 1 ] ||
  fail "concurrent clients got different measurements: $(cat "$WORK"/concurrent.*)"
[ "$(cat "$WORK"/concurrent.* | grep -o '"measured_at":"[^"]*"' | sort -u | wc -l)" = 1 ] ||
  fail "concurrent clients' costs were measured at different times"
check "4 concurrent clients, one measurement"

"$TASO" profile cache list --server "$ADDR" >"$WORK/list.txt"
grep -q "^3 entries" "$WORK/list.txt" || fail "cache list: $(cat "$WORK/list.txt")"
"$TASO" profile cache list --server "$ADDR" --op conv2d | grep -q "^2 entries" || fail "cache list --op conv2d"
# The keys it prints are signatures `measure` accepts.
grep -qxF "$RELU" "$WORK/list.txt" || fail "cache list does not print the relu key: $(cat "$WORK/list.txt")"

# The cache is durable: SIGKILL the server and start it again.
kill -9 "$PROFILER_PID"
wait "$PROFILER_PID" 2>/dev/null || true
start_profiler
"$TASO" profile measure "$CONV" "$NEW" --server "$ADDR" >"$WORK/after_kill.txt" || fail "measure after kill"
[ "$(grep -c ', cached' "$WORK/after_kill.txt")" = 2 ] || fail "costs lost in the kill: $(cat "$WORK/after_kill.txt")"
check "the cache survived SIGKILL of the server"

# An embedded client cannot open the cache the server holds, and says so.
set +e
"$TASO" profile cache list --cache-dir "$CACHE" >/dev/null 2>"$WORK/busy.err"
code=$?
set -e
[ "$code" = 3 ] && grep -q "in use by another process" "$WORK/busy.err" || fail "busy cache: exit $code $(cat "$WORK/busy.err")"

"$TASO" profile cache export --server "$ADDR" -o "$WORK/export.json" 2>/dev/null || fail "export"
[ "$(wc -l <"$WORK/export.json")" = 3 ] || fail "export has $(wc -l <"$WORK/export.json") lines, want 3"
"$TASO" profile cache invalidate "$RELU" --server "$ADDR" | grep -q "^1 entries removed" || fail "invalidate one"
set +e
"$TASO" profile cache invalidate --server "$ADDR" >/dev/null 2>&1
code=$?
set -e
[ "$code" = 2 ] || fail "invalidate without signatures or --all must refuse (exit $code)"
"$TASO" profile cache invalidate --all --device "another device" --server "$ADDR" | grep -q "^0 entries removed" ||
  fail "invalidate on another device removed entries"
"$TASO" profile cache invalidate --all --server "$ADDR" | grep -q "^2 entries removed" || fail "invalidate --all"
"$TASO" profile measure "$CONV" --server "$ADDR" | grep -q "cached" && fail "an invalidated entry was served"
check "export, invalidate one, per device, and all"

# Graceful shutdown on SIGTERM.
kill -TERM "$PROFILER_PID"
wait "$PROFILER_PID" || fail "taso_profiler exited non-zero on SIGTERM"
PROFILER_PID=
set +e
"$TASO" profile measure "$RELU" --server "$ADDR" >/dev/null 2>"$WORK/down.err"
code=$?
set -e
[ "$code" = 3 ] && grep -q "unreachable" "$WORK/down.err" || fail "stopped server: exit $code $(cat "$WORK/down.err")"
check "SIGTERM stops the server; clients are told it is unreachable"
echo "PASS"
