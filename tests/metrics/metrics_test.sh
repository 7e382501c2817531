#!/usr/bin/env bash
# taso_profiler with --metrics_listen: after two `taso profile measure` calls
# its /metrics counts both RPCs by method and code, times them, and shows the
# second call's cache hit; every call leaves one log line (none with
# --log_requests=false); other paths are 404.
source tests/generate/lib.sh
source tests/profile/lib.sh
source tests/metrics/lib.sh

RELU='relu(f32[1,16,14,14])'
start_profiler --metrics_listen 127.0.0.1:0
PORT=$(metrics_port taso_profiler "$WORK/profiler.log")
[ -n "$PORT" ] || fail "the profiler did not say where metrics are: $(cat "$WORK/profiler.log")"

scrape "$PORT" >"$WORK/before.txt"
grep -q "^200 text/plain; version=0.0.4" "$WORK/before.txt" || fail "scrape before: $(head -3 "$WORK/before.txt")"
grep -q "^taso_profiler_cache_hits_total 0$" "$WORK/before.txt" || fail "cache hits before: $(cat "$WORK/before.txt")"
grep -q "Measure" "$WORK/before.txt" && fail "a Measure call counted before any was made"

"$TASO" profile measure "$RELU" --server "$ADDR" >/dev/null || fail "first measure"
"$TASO" profile measure "$RELU" --server "$ADDR" >"$WORK/second.txt" || fail "second measure"
grep -q ", cached" "$WORK/second.txt" || fail "the second call was not a cache hit: $(cat "$WORK/second.txt")"

scrape "$PORT" >"$WORK/after.txt"
grep -Eq '^taso_rpc_requests_total\{method="/[a-z.]+\.Profiler/MeasureBatch",code="OK"\} 2$' "$WORK/after.txt" ||
  fail "request counter: $(grep rpc_requests "$WORK/after.txt")"
grep -Eq '^taso_rpc_duration_seconds_count\{method="/[a-z.]+\.Profiler/MeasureBatch"\} 2$' "$WORK/after.txt" ||
  fail "latency histogram: $(grep rpc_duration "$WORK/after.txt")"
grep -Eq '^taso_rpc_duration_seconds_bucket\{method="/[a-z.]+\.Profiler/MeasureBatch",le="\+Inf"\} 2$' "$WORK/after.txt" ||
  fail "latency +Inf bucket: $(grep rpc_duration "$WORK/after.txt")"
grep -q "^taso_profiler_cache_hits_total 1$" "$WORK/after.txt" || fail "cache hits: $(grep profiler_ "$WORK/after.txt")"
grep -q "^taso_profiler_cache_misses_total 1$" "$WORK/after.txt" || fail "cache misses: $(grep profiler_ "$WORK/after.txt")"
grep -q "^taso_profiler_signatures_total 2$" "$WORK/after.txt" || fail "signatures: $(grep profiler_ "$WORK/after.txt")"
grep -q "^# TYPE taso_rpc_duration_seconds histogram$" "$WORK/after.txt" || fail "histogram TYPE line missing"
check "two Measure calls: counted by method and code, timed, one cache hit"

[ "$(grep -Ec '^taso_profiler: /[a-z.]+\.Profiler/MeasureBatch OK [0-9.]+ ms (ipv4|ipv6):127\.0\.0\.1:[0-9]+$' "$WORK/profiler.log")" = 2 ] ||
  fail "want one log line per Measure call: $(grep Measure "$WORK/profiler.log")"
check "one log line per call: method, code, ms, peer"

[ "$(scrape "$PORT" other | head -1)" = 404 ] || fail "GET /other is not 404"
check "another path: 404"

kill "$PROFILER_PID" && wait "$PROFILER_PID" || true
: >"$WORK/profiler.log"
start_profiler --metrics_listen 127.0.0.1:0 --log_requests=false
"$TASO" profile measure "$RELU" --server "$ADDR" >/dev/null || fail "measure after restart"
grep -q "Profiler/MeasureBatch" "$WORK/profiler.log" && fail "--log_requests=false still logs: $(cat "$WORK/profiler.log")"
grep -Eq 'MeasureBatch",code="OK"\} 1$' <(scrape "$(metrics_port taso_profiler "$WORK/profiler.log")") || fail "the restarted profiler did not count the call"
check "--log_requests=false: counted, not logged"
echo PASS
