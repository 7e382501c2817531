# What the profiler's end-to-end tests share (after tests/generate/lib.sh):
# start_profiler [FLAGS...] starts taso_profiler on a free loopback port with
# its cache in $WORK/costs and fast measurement settings, and sets ADDR and
# PROFILER_PID; the profiler is killed when the test exits.
PROFILER="$PWD/bin/taso_profiler"

start_profiler() {  # start_profiler [FLAGS...]
  rm -f "$WORK/port"
  "$PROFILER" --listen 127.0.0.1:0 --port_file "$WORK/port" --cache_dir "$WORK/costs" --threads 1 \
    --repetitions 8 --min_timed_ms 2 "$@" >>"$WORK/profiler.log" 2>&1 &
  PROFILER_PID=$!
  for _ in $(seq 1 300); do
    [ -s "$WORK/port" ] && break
    sleep 0.1
  done
  [ -s "$WORK/port" ] || fail "taso_profiler did not start: $(tail -3 "$WORK/profiler.log")"
  ADDR="127.0.0.1:$(cat "$WORK/port")"
}
trap 'if [ -n "${PROFILER_PID:-}" ]; then kill -9 "$PROFILER_PID" 2>/dev/null || true; fi' EXIT
