#!/usr/bin/env bash
# The pictures end to end: `taso rules show ID --svg` on rules proved into a real
# store, `taso optimize --diff-svg` on the suite's transformer layer embedded and over
# gRPC, each SVG parsed as XML with the labels a reader needs; and a missing Graphviz
# refused up front with how to install it. Graphviz comes from deploy/setup.sh: this
# test fails, saying so, where it is missing.
source tests/generate/lib.sh
OPTIMIZER="$PWD/bin/taso_optimizer"
CHECK="$PWD/tests/pictures/check_svg.py"
command -v dot >/dev/null || fail "Graphviz's dot is not on PATH: run deploy/setup.sh (it installs graphviz)"
/usr/bin/python3 -c "import onnx" || fail "python3-onnx is missing: run deploy/setup.sh"

# Rules: two hand-written ones, proved by `taso rules import` into a fresh store.
cat >"$WORK/pictured.rules" <<'RULES'
(relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_4_3_3)
(matmul 0 ?x@2_4 (ewadd ?w1@4_4 ?w2@4_4))=>(ewadd (matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))
RULES
"$TASO" rules import "$WORK/pictured.rules" --db "$WORK/db" >"$WORK/import.out" 2>&1 ||
  fail "import: $(cat "$WORK/import.out")"
"$TASO" rules list --db "$WORK/db" >"$WORK/list.out" || fail "rules list"
conv_id=$(grep 'relu (conv2d' "$WORK/list.out" | cut -d' ' -f1)
matmul_id=$(grep '(matmul 0 ?x@2_4 (ewadd' "$WORK/list.out" | cut -d' ' -f1)
[[ -n $conv_id && -n $matmul_id ]] || fail "the imported rules are not listed as proved: $(cat "$WORK/list.out")"
"$TASO" rules show "$conv_id" --db "$WORK/db" --svg "$WORK/conv.svg" >"$WORK/show.out" 2>&1 ||
  fail "show --svg: $(cat "$WORK/show.out")"
grep -q "wrote $WORK/conv.svg" "$WORK/show.out" || fail "show does not say where the picture went: $(cat "$WORK/show.out")"
/usr/bin/python3 "$CHECK" "$WORK/conv.svg" --text source --text target --text conv2d --text relu \
  --text "act=none" --text "act=relu" --text "input x" --text "weight w" --text "rule $conv_id (proved)" \
  --text "if conv2d(1,1,0,0,?0) relu()" || fail "the conv rule's picture"
[[ $(grep -c '>input x</text>' "$WORK/conv.svg") -eq 2 ]] || fail "x is not drawn once on each side"
"$TASO" rules show "$matmul_id" --db "$WORK/db" --svg "$WORK/matmul.svg" >/dev/null || fail "show --svg matmul"
/usr/bin/python3 "$CHECK" "$WORK/matmul.svg" --text matmul --text ewadd --text "weight w1" --text "weight w2" ||
  fail "the matmul rule's picture"
check "rules show --svg: both sides, shared variables, side conditions"

set +e
"$TASO" rules list --db "$WORK/db" --svg "$WORK/no.svg" >/dev/null 2>"$WORK/list-svg.err"
code=$?
set -e
[[ $code -eq 2 ]] && grep -qF -- '--svg is not a flag of `taso rules list`' "$WORK/list-svg.err" || fail "--svg without show: $code"

# The transformer layer: the Q/K/V projections merged into one matmul and a split.
/usr/bin/python3 models/build_structures.py transformer_layer "$WORK/tl.onnx" --small || fail "transformer_layer"
COMMON=(--backend analytic --cache-dir none --no-measure --time-limit 10)
optimize_checked "$WORK/tl.onnx" -o "$WORK/tl.opt.onnx" "${COMMON[@]}" --diff-svg "$WORK/tl.svg" \
  >"$WORK/tl.out" 2>"$WORK/tl.err" || fail "optimize --diff-svg: $(cat "$WORK/tl.err")"
grep -q "^diff picture: 1 region: .*; wrote $WORK/tl.svg" "$WORK/tl.out" || fail "no summary: $(cat "$WORK/tl.out")"
/usr/bin/python3 "$CHECK" "$WORK/tl.svg" --text "region 1" --text before --text after --text "(MatMul)" \
  --removed matmul --removed ewadd --added matmul --added split --added "f32[16,192]" ||
  fail "the transformer layer's diff picture"
grep -q "ONNX [A-Za-z0-9_]*_node (MatMul)" "$WORK/tl.svg" || fail "the model's own node names are not in the picture"
check "optimize --diff-svg: the merged Q/K/V projections drawn before and after, labelled with the ONNX nodes"

# Over gRPC the client has the ONNX files only: the same merge, as ONNX spells it.
"$OPTIMIZER" --listen 127.0.0.1:0 --port_file "$WORK/port" --cache_dir none \
  >"$WORK/optimizer.log" 2>&1 &
OPT_PID=$!
trap 'kill $OPT_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || fail "taso_optimizer did not start: $(cat "$WORK/optimizer.log")"
optimize_checked "$WORK/tl.onnx" -o "$WORK/tl.srv.onnx" --server "127.0.0.1:$(cat "$WORK/port")" --backend analytic \
  --no-measure --time-limit 10 --json --diff-svg "$WORK/tl.srv.svg" >"$WORK/srv.json" 2>"$WORK/srv.err" ||
  fail "--server --diff-svg: $(cat "$WORK/srv.err")"
grep -q "^diff picture: 1 region" "$WORK/srv.err" || fail "with --json the summary goes to stderr: $(cat "$WORK/srv.err")"
/usr/bin/python3 "$CHECK" "$WORK/tl.srv.svg" --text "as the ONNX files have it" --text "(MatMul)" --text "(Split)" \
  --removed matmul --added split ||
  fail "the diff picture over gRPC"
kill -TERM "$OPT_PID" && wait "$OPT_PID" || true
trap - EXIT
check "optimize --server --diff-svg: drawn from the ONNX files"

# No Graphviz: refused before the search, saying how to install it; no output written.
set +e
PATH=/nonexistent optimize_checked "$WORK/tl.onnx" -o "$WORK/nodot.onnx" "${COMMON[@]}" --diff-svg "$WORK/nodot.svg" \
  >/dev/null 2>"$WORK/nodot.err"
code=$?
set -e
[[ $code -eq 1 ]] || fail "without Graphviz: exit $code, want 1: $(cat "$WORK/nodot.err")"
grep -q "install graphviz (deploy/setup.sh)" "$WORK/nodot.err" || fail "no install hint: $(cat "$WORK/nodot.err")"
[[ ! -e $WORK/nodot.onnx && ! -e $WORK/nodot.svg ]] || fail "without Graphviz something was written"
set +e
PATH=/nonexistent "$TASO" rules show "$conv_id" --db "$WORK/db" --svg "$WORK/nodot.svg" >/dev/null 2>"$WORK/nodot2.err"
code=$?
set -e
[[ $code -eq 1 ]] && grep -q "install graphviz (deploy/setup.sh)" "$WORK/nodot2.err" ||
  fail "rules show without Graphviz: exit $code: $(cat "$WORK/nodot2.err")"
check "a missing Graphviz: exit 1, 'install graphviz (deploy/setup.sh)', nothing written"
echo PASS
