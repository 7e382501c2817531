#!/usr/bin/env bash
# The benchmark suite's hand-built structures (models/build_structures.py --small) through
# `taso optimize`, both searches, the built-in rules (analytic costs): every one imports,
# optimizes or comes back unchanged (exit 0 or 4), is checked equal, and its output passes the
# ONNX checker. The full-size runs are bench/suite.sh.
source tests/generate/lib.sh
BUILD="$PWD/models/build_structures.py"
onnx_ok() { /usr/bin/python3 -c "import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]))" "$1"; }
names=$(/usr/bin/python3 "$BUILD" --list) || fail "build_structures.py --list (needs python3-onnx)"
for n in $names; do
  /usr/bin/python3 "$BUILD" "$n" "$WORK/$n.onnx" --small || fail "$n did not build"
  for s in eqsat backtrack; do
    rc=0
    optimize_checked "$WORK/$n.onnx" -o "$WORK/$n.$s.onnx" --search "$s" --backend analytic --cache-dir none \
      --time-limit 10 --json >"$WORK/$n.$s.json" 2>"$WORK/$n.$s.err" || rc=$?
    [[ $rc -eq 0 || $rc -eq 4 ]] || fail "$n $s: exit $rc: $(tail -3 "$WORK/$n.$s.err")"
    grep -q '"verified_numerically":true' "$WORK/$n.$s.json" || fail "$n $s: not checked equal: $(cat "$WORK/$n.$s.json")"
    onnx_ok "$WORK/$n.$s.onnx" || fail "$n $s: the output fails the ONNX checker"
    check "$n $s: exit $rc"
  done
done

# Another configuration: the transformer layer at batch 2 (attention on 4-D tensors), one search.
/usr/bin/python3 "$BUILD" transformer_layer "$WORK/tl_b2.onnx" --small --batch 2 --seq 8 || fail "transformer_layer --batch 2 did not build"
rc=0
optimize_checked "$WORK/tl_b2.onnx" -o "$WORK/tl_b2.out.onnx" --search eqsat --backend analytic --cache-dir none \
  --time-limit 10 --json >"$WORK/tl_b2.json" 2>"$WORK/tl_b2.err" || rc=$?
[[ $rc -eq 0 || $rc -eq 4 ]] || fail "transformer_layer batch 2: exit $rc: $(tail -3 "$WORK/tl_b2.err")"
grep -q '"verified_numerically":true' "$WORK/tl_b2.json" || fail "transformer_layer batch 2: not checked equal"
onnx_ok "$WORK/tl_b2.out.onnx" || fail "transformer_layer batch 2: the output fails the ONNX checker"
check "transformer_layer --batch 2 --seq 8 eqsat: exit $rc"
echo PASS
