#!/usr/bin/env bash
# taso optimize --server checks what the server sends back before writing it:
# a server (a test double here) that answers with another function gets the
# input written instead, exit 4, and the report says why; an answer that is
# the input itself is written as it is.
source tests/generate/lib.sh
FIXED="$PWD/tests/optimize/fixed_reply_optimizer"
HERE="$PWD/tests/optimize"
mkdir -p "$WORK/models"
trap 'if [ -n "${FIXED_PID:-}" ]; then kill -9 "$FIXED_PID" 2>/dev/null || true; fi' EXIT

/usr/bin/python3 "$HERE/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"
# The same model with its last Relu turned into a Sigmoid: a different function.
/usr/bin/python3 - "$WORK/models/convrelu.onnx" "$WORK/wrong.onnx" <<'PY' || fail "making the wrong answer"
import onnx, sys
m = onnx.load(sys.argv[1])
relus = [n for n in m.graph.node if n.op_type == "Relu"]
relus[-1].op_type = "Sigmoid"
onnx.save(m, sys.argv[2])
PY

serve() {
  [ -n "${FIXED_PID:-}" ] && kill -9 "$FIXED_PID" 2>/dev/null
  rm -f "$WORK/port"
  "$FIXED" "$1" "$WORK/port" 2>"$WORK/fixed.log" &
  FIXED_PID=$!
  for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  [ -s "$WORK/port" ] || fail "the test server did not start: $(cat "$WORK/fixed.log")"
  ADDR="127.0.0.1:$(cat "$WORK/port")"
}

serve "$WORK/wrong.onnx"
set +e
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/out.onnx" --server "$ADDR" --json >"$WORK/wrong.json" \
  2>"$WORK/wrong.err"
code=$?
set -e
[ $code -eq 4 ] || fail "a wrong answer: exit $code (want 4): $(cat "$WORK/wrong.err" "$WORK/wrong.json")"
grep -q '"local_check":"LOCAL_CHECK_FAILED"' "$WORK/wrong.json" && grep -q '"returned_original":true' "$WORK/wrong.json" &&
  grep -q "differs from the input here" "$WORK/wrong.json" || fail "the report: $(cat "$WORK/wrong.json")"
cmp -s "$WORK/models/convrelu.onnx" "$WORK/out.onnx" || fail "what was written is not the input"
grep -q "\"output_sha256\":\"$(sha256sum "$WORK/out.onnx" | cut -d' ' -f1)\"" "$WORK/wrong.json" ||
  fail "output_sha256 is not the written file's: $(cat "$WORK/wrong.json")"
check "a server's wrong answer is caught here: the input is written, exit 4"

serve "$WORK/models/convrelu.onnx"
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/same.onnx" --server "$ADDR" --json >"$WORK/same.json" \
  2>"$WORK/same.err" || fail "the input as the answer: $(cat "$WORK/same.err")"
grep -q '"local_check":"LOCAL_CHECK_INPUT_RETURNED"' "$WORK/same.json" || fail "the report: $(cat "$WORK/same.json")"
cmp -s "$WORK/models/convrelu.onnx" "$WORK/same.onnx" || fail "the input as the answer was not written as it is"
check "the input as the answer is written as it is"
echo "PASS"
