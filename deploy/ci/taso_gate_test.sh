#!/usr/bin/env bash
# deploy/ci/taso-gate.sh against real `taso optimize --json` reports, one per
# exit code docs/ci.md's table gates on: 0 (a checked result, and one that is
# the input byte for byte), 2 (an invalid model, a rule file edited after its
# proof), 3 (an unreachable server), 4 (a server's answer that fails the
# numerical check here, so the input comes back), 5 (checked but not
# measured). Also the rule-set pin, the measured-slower check, numbers printed
# as JSON numbers or strings, and a failure's {"error": {..., "exit_code"}}
# report.
# The gate runs under /bin/sh (dash on Debian): it must stay POSIX.
set -euo pipefail
TASO="$PWD/cli/taso"
GATE="$PWD/deploy/ci/taso-gate.sh"
HERE_OPT="$PWD/tests/optimize"
FIXED="$PWD/tests/optimize/fixed_reply_optimizer"
trap 'if [ -n "${FIXED_PID:-}" ]; then kill "$FIXED_PID" 2>/dev/null || true; fi' EXIT
WORK="${TEST_TMPDIR:-$(mktemp -d)}/work"
rm -rf "$WORK" && mkdir -p "$WORK/models"
unset GITHUB_ACTIONS EXPECTED_RULES MIN_SPEEDUP REQUIRE_MEASURED

fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "ok: $*"; }
command -v jq >/dev/null || fail "jq not found (deploy/setup.sh installs it)"

# optimize NAME EXPECTED-EXIT MODEL ARGS...: $WORK/NAME.json (stdout), .err, .onnx
optimize() {
  local name=$1 want=$2 model=$3 rc=0
  shift 3
  "$TASO" optimize "$model" -o "$WORK/$name.onnx" --json "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" || rc=$?
  [[ $rc -eq $want ]] || fail "$name: taso optimize exit $rc, not $want: $(tail -3 "$WORK/$name.err")"
}
# gate EXPECTED-STATUS REPORT [EXIT_CODE]: runs the gate, its output in $WORK/gate.out
gate() {
  local want=$1 rc=0
  shift
  sh "$GATE" "$@" >"$WORK/gate.out" 2>&1 || rc=$?
  [[ $rc -eq $want ]] || fail "taso-gate.sh $*: status $rc, not $want: $(cat "$WORK/gate.out")"
}
said() { grep -qF -- "$1" "$WORK/gate.out" || fail "the gate did not say '$1': $(cat "$WORK/gate.out")"; }

/usr/bin/python3 "$HERE_OPT/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"
# Two matmuls sharing their input, subtracted: swapping them changes the result.
/usr/bin/python3 - "$WORK/models/matsub.onnx" <<'PY' || fail "making matsub.onnx"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(1)
w = lambda n: numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), n)
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "p"], ["a"]), helper.make_node("MatMul", ["x", "q"], ["b"]),
     helper.make_node("Sub", ["a", "b"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w("p"), w("q")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
PY
COMMON=(--backend analytic --cache-dir none --time-limit 5)
# Exit 3 takes the client's 10 s connection wait: started first, in the background.
optimize unreachable 3 "$WORK/models/convrelu.onnx" "${COMMON[@]}" --server 127.0.0.1:1 &
unreachable_pid=$!

# --- exit 0: measured (our oneDNN graph runner times both, whatever predicted the costs) ---
optimize checked 0 "$WORK/models/convrelu.onnx" "${COMMON[@]}" --min-gain 0 --measure-backend cpu
[[ $(jq -r .measurement "$WORK/checked.json") == MEASURED_KEPT_* ]] ||
  fail "a measured run without a measurement: $(cat "$WORK/checked.json")"
gate 0 "$WORK/checked.json" 0
said "optimized and checked" && said "pass: use the output"
digest=$(jq -r .rules_digest "$WORK/checked.json")
[[ $digest =~ ^[0-9a-f]{64}$ ]] || fail "no rules_digest in the report: $(cat "$WORK/checked.json")"
EXPECTED_RULES=$digest gate 0 "$WORK/checked.json" 0
EXPECTED_RULES=0000 gate 1 "$WORK/checked.json" 0
said "rule set changed"
check "exit 0, checked: passes; a pinned rules_digest passes, another fails"

optimize same 0 "$WORK/models/convrelu.onnx" "${COMMON[@]}"
[[ $(jq -r .output_is_input "$WORK/same.json") == true ]] || fail "expected output_is_input: $(cat "$WORK/same.json")"
gate 0 "$WORK/same.json" 0
said "the output is the input byte for byte"
check "exit 0, the output the input byte for byte (below --min-gain): passes unverified"

# --- exit 5: checked, but analytic costs cannot run a whole graph, so not measured ---
optimize unmeasured 5 "$WORK/models/convrelu.onnx" "${COMMON[@]}" --min-gain 0
[[ $(jq -r .measurement "$WORK/unmeasured.json") == SKIPPED_BACKEND_CANNOT_RUN ]] ||
  fail "exit 5 with measurement $(jq -r .measurement "$WORK/unmeasured.json")"
grep -q "NOT MEASURED" <("$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/text.onnx" "${COMMON[@]}" --min-gain 0 \
  -q || true) || fail "the text report does not say NOT MEASURED"
gate 0 "$WORK/unmeasured.json" 5
said "not measured against the input (SKIPPED_BACKEND_CANNOT_RUN" && said "pass: use the output (checked, not measured)"
REQUIRE_MEASURED=true gate 1 "$WORK/unmeasured.json" 5
said "REQUIRE_MEASURED=true"
optimize skipped 5 "$WORK/models/convrelu.onnx" "${COMMON[@]}" --min-gain 0 --no-measure
check "exit 5 (checked, not measured: analytic costs, or --no-measure): passes with a warning, fails with REQUIRE_MEASURED"

# Reports edited from the real one: what the analytic backend cannot produce.
edit() { jq "$1" "$WORK/checked.json" >"$WORK/edited.json"; }
edit '.measurement = "MEASURED_KEPT_CANDIDATE" | .measured_speedup = 0.8'
gate 1 "$WORK/edited.json" 0
said "measured slower"
MIN_SPEEDUP=0.75 gate 0 "$WORK/edited.json" 0
edit '.measurement = "MEASURED_KEPT_CANDIDATE" | .measured_speedup = 1.02'
gate 0 "$WORK/edited.json" 0
edit '.measurement = "MEASURED_KEPT_BASELINE" | .measured_speedup = 0.5 | .output_is_input = true | .verified_numerically = false'
gate 0 "$WORK/edited.json" 0
# A re-export asked for (--export-baseline) holds no rewrite: slower is a
# warning, not a failure; a checked one in time passes without it.
edit '.measurement = "MEASURED_KEPT_REEXPORT" | .measured_speedup = 0.9'
gate 0 "$WORK/edited.json" 0
said "warning: the re-export of the input (--export-baseline) measured slower: measured_speedup 0.9 < 0.99"
edit '.measurement = "MEASURED_KEPT_REEXPORT" | .measured_speedup = 1'
gate 0 "$WORK/edited.json" 0
! grep -qF "measured slower" "$WORK/gate.out" || fail "a re-export in time warned: $(cat "$WORK/gate.out")"
edit '.measurement = "MEASURED_KEPT_REEXPORT" | del(.measured_speedup)'
gate 1 "$WORK/edited.json" 0
said "without measured_speedup"
edit '.verified_numerically = false'
gate 1 "$WORK/edited.json" 0
said "not verified"
# int64 fields as JSON numbers or as strings ("search_time_ms":"0"): both read.
edit 'walk(if type == "string" and test("^-?[0-9]+$") then tonumber else . end)'
gate 0 "$WORK/edited.json" 0
edit 'walk(if type == "number" then tostring else . end)'
gate 0 "$WORK/edited.json" 0
printf 'not json\n' >"$WORK/garbage.json"
gate 1 "$WORK/garbage.json" 0
said "not a JSON report"
check "exit 0: a kept candidate measured slower fails (MIN_SPEEDUP), a re-export warns, unverified fails, numbers or strings read"

# --- exit 2: an invalid model ---
optimize bad 2 "$WORK/models/truncated.onnx" "${COMMON[@]}"
gate 1 "$WORK/bad.json" 2
said "invalid ONNX (exit 2)"
# A failure's report as {"error": {...}}: the gate goes by its exit_code when
# not given one. Built from this run's message unless the report already is one.
if ! { [[ -s $WORK/bad.json ]] && jq -e '.error.exit_code' "$WORK/bad.json" >/dev/null 2>&1; }; then
  jq -n --arg m "$(cat "$WORK/bad.err")" '{error: {code: "INVALID_ARGUMENT", message: $m, exit_code: 2}}' >"$WORK/bad.json"
fi
gate 1 "$WORK/bad.json"
said "(exit 2)"
gate 1 "$WORK/bad.json" 3
said "the report says exit 2, the process returned 3"
gate 1 "$WORK/garbage.json"
said "no exit code given"
check "exit 2 (invalid ONNX): fails; an error report's exit_code is read when no code is given"

# --- exit 3: nothing listens on port 1 ---
wait "$unreachable_pid" || fail "the unreachable-server run failed (above)"
gate 1 "$WORK/unreachable.json" 3
said "unreachable or busy (exit 3)"
GITHUB_ACTIONS=true gate 1 "$WORK/unreachable.json" 3
grep -q '^::error::the optimizer server was unreachable' "$WORK/gate.out" || fail "no ::error:: annotation: $(cat "$WORK/gate.out")"
check "exit 3 (unreachable server): fails, as a GitHub annotation under Actions"

# --- exit 4: the optimized model fails its check, so the input comes back ---
# A server (a test double) answers with the matmuls swapped; taso optimize's
# own check of the answer catches it. (A rule file edited after its proof no
# longer gets this far: it is refused on load, exit 2, below.)
/usr/bin/python3 - "$WORK/models/matsub.onnx" "$WORK/swapped.onnx" <<'PY' || fail "making the swapped answer"
import sys
import onnx
m = onnx.load(sys.argv[1])
sub = [n for n in m.graph.node if n.op_type == "Sub"][0]
sub.input[0], sub.input[1] = sub.input[1], sub.input[0]
onnx.save(m, sys.argv[2])
PY
"$FIXED" "$WORK/swapped.onnx" "$WORK/fixed.port" 2>"$WORK/fixed.log" &
FIXED_PID=$!
for _ in $(seq 1 100); do [ -s "$WORK/fixed.port" ] && break; sleep 0.1; done
[ -s "$WORK/fixed.port" ] || fail "the test server did not start: $(cat "$WORK/fixed.log")"
optimize kept 4 "$WORK/models/matsub.onnx" --server "127.0.0.1:$(cat "$WORK/fixed.port")" --time-limit 5
kill "$FIXED_PID" 2>/dev/null || true
cmp -s "$WORK/models/matsub.onnx" "$WORK/kept.onnx" || fail "exit 4 but the output is not the input"
[[ $(jq -r .returned_original "$WORK/kept.json") == true ]] || fail "exit 4 without returned_original: $(cat "$WORK/kept.json")"
gate 0 "$WORK/kept.json" 4
said "the output file is the input unchanged"
said "pass: keep the input"
EXPECTED_RULES=0000 gate 1 "$WORK/kept.json" 4
check "exit 4 (the optimized graph failed its check): the input kept with a warning: $(jq -r '.error | tostring' "$WORK/kept.json" | cut -c1-100)"

# --- exit 2: a rule file edited after its proof (outputs swapped) is refused on load ---
"$TASO" rules import "$HERE_OPT/mm2.sexpr" --db "$WORK/db" >"$WORK/import.txt" 2>&1 || fail "import: $(cat "$WORK/import.txt")"
"$TASO" rules export --db "$WORK/db" --format json -o "$WORK/rule.jsonl" 2>/dev/null || fail "export"
jq -s '{format_version: 1, rules: map(.outputs |= map(.targetOutput = 1 - (.targetOutput // 0)))}' "$WORK/rule.jsonl" \
  >"$WORK/unsound.json"
optimize edited 2 "$WORK/models/matsub.onnx" "${COMMON[@]}" --rules "$WORK/unsound.json"
grep -q "does not have its content's id" "$WORK/edited.err" || fail "the refusal: $(cat "$WORK/edited.err")"
gate 1 "$WORK/edited.json" 2
check "exit 2 (a rule file edited after its proof): refused on load, the gate fails"

# --- exit 1 cannot be forced from outside: the gate's code path alone ---
: >"$WORK/empty.json"
gate 1 "$WORK/empty.json" 1
said "internal error (exit 1)"
gate 1 "$WORK/empty.json" 6
said "does not list"
check "exit 1 and unknown codes fail"
echo PASS
