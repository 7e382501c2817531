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
echo PASS
