#!/usr/bin/env bash
# The optimizer in the fault matrix, real processes on loopback: kill -9 of
# taso_optimizer mid-call, the client's connection reset mid-call, the
# optimizer's connection to its profiler reset mid-search, and a full disk
# under the optimized model's file. Each time the client ends with a clear
# error and no output file, or with the model an undisturbed call returns:
# never a wrong or partial model. A call's search is held in flight by
# stopping the profiler it waits on (SIGSTOP). (SIGTERM drains the call in
# flight: tests/optimize/drain_test.sh.)
source tests/generate/lib.sh
source tests/profile/lib.sh
source tests/faults/lib.sh
OPTIMIZER="$PWD/bin/taso_optimizer"
mkdir -p "$WORK/models" "$WORK/out"
/usr/bin/python3 "$PWD/tests/optimize/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"
MODEL="$WORK/models/convrelu.onnx"
CALL=(--backend analytic --time-limit 10 --min-gain 0)

start_profiler
FAULT_PIDS+=("$PROFILER_PID")
PROFILER_ADDR=$ADDR
start_proxy profiler-proxy "$PROFILER_ADDR"
PROFILER_PROXY_PID=$PROXY_PID
PROFILER_PROXY=$PROXY_ADDR

# start_optimizer PORT: taso_optimizer on PORT (0: any) whose profiler is
# reached through the proxy; sets OPT_PID and OPT_ADDR.
start_optimizer() {
  rm -f "$WORK/opt.port"
  "$OPTIMIZER" --listen "127.0.0.1:$1" --port_file "$WORK/opt.port" --profiler "$PROFILER_PROXY" \
    --max_time_limit_s 20 >>"$WORK/optimizer.log" 2>&1 &
  OPT_PID=$!
  FAULT_PIDS+=("$OPT_PID")
  wait_for_line "$WORK/opt.port" . 100 || fail "taso_optimizer did not start: $(tail -3 "$WORK/optimizer.log")"
  OPT_ADDR="127.0.0.1:$(cat "$WORK/opt.port")"
}
# optimize_held OUT SERVER: starts a call while the profiler is stopped, so
# its search waits; sets CLIENT.
optimize_held() {
  kill -STOP "$PROFILER_PID"
  optimize_checked "$MODEL" -o "$1" --server "$2" "${CALL[@]}" >"$1.out" 2>&1 &
  CLIENT=$!
  sleep 2
  kill -0 "$CLIENT" 2>/dev/null || fail "the call finished while its profiler was held: $(cat "$1.out")"
}
# no_model FILE: no output file and nothing partial beside it.
no_model() {
  [ ! -e "$1" ] || fail "an output file was written by a failed call: $1"
  ! ls "$(dirname "$1")" | grep -q "partial" || fail "a partial file was left: $(ls "$(dirname "$1")")"
}

start_optimizer 0
port=$(cat "$WORK/opt.port")
optimize_checked "$MODEL" -o "$WORK/out/ref.onnx" --server "$OPT_ADDR" "${CALL[@]}" >"$WORK/ref.out" 2>&1 ||
  fail "undisturbed call: $(cat "$WORK/ref.out")"
check "undisturbed call: $(grep -m1 -o "cost [^,]*" "$WORK/ref.out" || head -1 "$WORK/ref.out")"

# 1. kill -9 of the optimizer mid-call: the client is told, no file.
optimize_held "$WORK/out/killed.onnx" "$OPT_ADDR"
kill -9 "$OPT_PID"
set +e; wait "$CLIENT"; code=$?; set -e
kill -CONT "$PROFILER_PID"
[ "$code" = 3 ] || fail "optimizer killed mid-call: exit $code, want 3: $(cat "$WORK/out/killed.onnx.out")"
no_model "$WORK/out/killed.onnx"
start_optimizer "$port"
optimize_checked "$MODEL" -o "$WORK/out/killed.onnx" --server "$OPT_ADDR" "${CALL[@]}" >"$WORK/retry.out" 2>&1 ||
  fail "the call after a restart: $(cat "$WORK/retry.out")"
cmp -s "$WORK/out/ref.onnx" "$WORK/out/killed.onnx" || fail "the model after the restart differs from the undisturbed one"
check "kill -9 mid-call: exit 3 ($(tail -1 "$WORK/out/killed.onnx.out" | head -c 80)), no file; after a restart the same model"

# 2. The client's connection reset mid-call: the client is told, no file;
# the server notices the cancelled call and serves the next one.
start_proxy optimizer-proxy "$OPT_ADDR"
optimize_held "$WORK/out/dropped.onnx" "$PROXY_ADDR"
dropped=$(drop_connections optimizer-proxy "$PROXY_PID")
set +e; wait "$CLIENT"; code=$?; set -e
kill -CONT "$PROFILER_PID"
[ "$dropped" -gt 0 ] || fail "no connection was open to drop"
[ "$code" = 3 ] || fail "client connection reset: exit $code, want 3: $(cat "$WORK/out/dropped.onnx.out")"
no_model "$WORK/out/dropped.onnx"
optimize_checked "$MODEL" -o "$WORK/out/dropped.onnx" --server "$PROXY_ADDR" "${CALL[@]}" >"$WORK/again.out" 2>&1 ||
  fail "the next call through the proxy: $(cat "$WORK/again.out")"
cmp -s "$WORK/out/ref.onnx" "$WORK/out/dropped.onnx" || fail "the next call's model differs from the undisturbed one"
kill -0 "$OPT_PID" 2>/dev/null || fail "the optimizer died"
check "client connection reset mid-call: exit 3, no file; the next call returned the same model"

# 3. The optimizer's connection to its profiler reset mid-search: the
# optimizer calls its profiler again (profiler/open_client.h) and the call
# returns the undisturbed model.
optimize_held "$WORK/out/profiler.onnx" "$OPT_ADDR"
dropped=$(drop_connections profiler-proxy "$PROFILER_PROXY_PID")
kill -CONT "$PROFILER_PID"
set +e; wait "$CLIENT"; code=$?; set -e
[ "$dropped" -gt 0 ] || fail "no profiler connection was open to drop"
[ "$code" = 0 ] || fail "profiler connection reset: exit $code: $(cat "$WORK/out/profiler.onnx.out")"
cmp -s "$WORK/out/ref.onnx" "$WORK/out/profiler.onnx" || fail "the model returned after the profiler reset differs"
check "profiler connection reset mid-search: the optimizer called again; the same model"

# 4. A full disk under the output: exit 1 saying so; no new file, and a
# model already there is left whole.
FLAG="$WORK/disk-full"
cp "$WORK/out/ref.onnx" "$WORK/out/existing.onnx"
touch "$FLAG"
set +e
env $(full_disk_env "$WORK/out" "$FLAG") "$TASO" optimize "$MODEL" -o "$WORK/out/full.onnx" --server "$OPT_ADDR" \
  "${CALL[@]}" >"$WORK/full.out" 2>&1
code=$?
env $(full_disk_env "$WORK/out" "$FLAG") "$TASO" optimize "$MODEL" -o "$WORK/out/existing.onnx" --server "$OPT_ADDR" \
  "${CALL[@]}" >"$WORK/existing.out" 2>&1
code2=$?
set -e
rm -f "$FLAG"
[ "$code" = 1 ] && grep -q "disk is full" "$WORK/full.out" || fail "full disk: exit $code: $(cat "$WORK/full.out")"
no_model "$WORK/out/full.onnx"
[ "$code2" = 1 ] || fail "full disk over an existing model: exit $code2"
cmp -s "$WORK/out/ref.onnx" "$WORK/out/existing.onnx" || fail "a failed write damaged the model already there"
check "full disk: exit 1 ($(grep -m1 -o "No space[^(]*" "$WORK/full.out")), no partial file, the existing model intact"
echo "PASS"
