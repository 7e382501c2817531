#!/usr/bin/env bash
# `taso rules list` filters and `taso rules match` against real stores.
# Hand-written rules are imported (proved by the store, so they carry side
# conditions); the models are ResNet-50 from torchvision and the suite's
# transformer layer (small), exported to ONNX here.
source tests/generate/lib.sh

cat >"$WORK/rules.txt" <<'RULES'
(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)
(relu (conv2d 1 1 0 0 ?i@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?i@1_4_5_5 ?w@4_4_3_3)
(matmul 0 ?x@2_4 (ewadd ?y@4_4 ?z@4_4))=>(ewadd (matmul 0 ?x@2_4 ?y@4_4) (matmul 0 ?x@2_4 ?z@4_4))
(conv2d 1 1 0 0 ?i@1_4_5_5 ?w@4_4_1_3)=>(conv2d 1 1 0 0 ?i@1_4_5_5 (enlarge 3 3 ?w@4_4_1_3))
((matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))=>((split_0 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))) (split_1 (split 1 (matmul 0 ?x@2_4 (concat 1 2 ?w1@4_4 ?w2@4_4)))))
RULES

mkdir -p "$WORK/db"
start_store "$WORK/db/store-0"
addr="127.0.0.1:$STORE_PORT"
"$TASO" rules import "$WORK/rules.txt" --store "$addr" >"$WORK/import.out" 2>"$WORK/import.err" ||
  fail "import: $(cat "$WORK/import.err")"
grep -q "imported 5 rules (5 proved)" "$WORK/import.out" || fail "import: $(cat "$WORK/import.out")"

# list LABEL EXPECTED_COUNT GREP_FOR_EACH [FLAGS...]: every listed rule matches GREP_FOR_EACH.
list() {
  local label=$1 want=$2 each=$3
  shift 3
  "$TASO" rules list "$@" >"$WORK/list.out" 2>"$WORK/list.err" || fail "$label: exit $?: $(cat "$WORK/list.err")"
  local n
  n=$(wc -l <"$WORK/list.out")
  [ "$n" -eq "$want" ] || fail "$label: $n rules, expected $want: $(cat "$WORK/list.out")"
  if [ "$n" -gt 0 ] && grep -v -q -- "$each" "$WORK/list.out"; then fail "$label: $(cat "$WORK/list.out")"; fi
  check "$label: $n"
}
list "--op-all matmul,ewadd" 1 "(matmul 0 ?x@2_4 (ewadd" --op-all matmul,ewadd --store "$addr"
list "--op matmul" 2 "matmul" --op matmul --store "$addr"
list "--only-ops ewadd" 1 "(ewadd ?x@2_4 ?y@2_4)=>" --only-ops ewadd --store "$addr"
list "--only-ops conv2d,relu,enlarge" 2 "conv2d" --only-ops conv2d,relu,enlarge --store "$addr"
list "--pattern (relu (conv2d ...)) on either side" 1 "(relu (conv2d 1 1 0 0" --pattern '(relu (conv2d ?sh ?sw ?pad 0 ?x ?w))' --store "$addr"
list "--pattern (relu ?y) --side target" 0 "" --pattern '(relu ?y)' --side target --store "$addr"
list "--pattern (enlarge ...) --side target" 1 "enlarge 3 3" --pattern '(enlarge 3 3 ?w)' --side target --store "$addr"
list "--pattern split of a matmul" 1 "split_0" --pattern '(split_0 (split 1 (matmul 0 ?x ?w)))' --store "$addr"
list "--axiom conv_enlarge" 1 "enlarge" --axiom conv_enlarge --store "$addr"
set +e
"$TASO" rules list --store "$addr" --pattern '(matmul ?x ?w)' 2>"$WORK/e1"; code=$?
[ $code -eq 2 ] && grep -q "matmul takes 3 arguments" "$WORK/e1" || fail "a bad pattern: exit $code, $(cat "$WORK/e1")"
"$TASO" rules list --store "$addr" --axiom no_such_axiom 2>"$WORK/e2"; code=$?
[ $code -eq 2 ] && grep -q "no axiom 'no_such_axiom'" "$WORK/e2" || fail "an unknown axiom: exit $code, $(cat "$WORK/e2")"
"$TASO" rules list --store "$addr" --op-all conv 2>"$WORK/e3"; code=$?
[ $code -eq 2 ] && grep -q "unknown operator 'conv'" "$WORK/e3" || fail "an unknown operator: exit $code, $(cat "$WORK/e3")"
set -e
check "bad patterns, axioms and operators are usage errors"

# The models.
/usr/bin/python3 models/export_torchvision.py resnet50 "$WORK/resnet50.onnx" >"$WORK/export.log" 2>&1 ||
  fail "exporting ResNet-50 (needs python3-torchvision): $(tail -3 "$WORK/export.log")"
/usr/bin/python3 models/build_structures.py transformer_layer "$WORK/transformer.onnx" --small >>"$WORK/export.log" 2>&1 ||
  fail "building the transformer layer (needs python3-onnx): $(tail -3 "$WORK/export.log")"

# match MODEL OUT [FLAGS...]: the JSON report.
match() {
  local model=$1 out=$2
  shift 2
  "$TASO" rules match "$model" --json "$@" >"$out" 2>"$WORK/match.err" ||
    fail "match $model $*: exit $?: $(cat "$WORK/match.err")"
}
# Rule ids by the sides the import gave them.
id_of() { "$TASO" rules list --store "$addr" --pattern "$1" | cut -d' ' -f1; }
enlarge_id=$(id_of '(enlarge 3 3 ?w)')
merge_id=$(id_of '(split_0 ?s)')
fusion_id=$(id_of '(relu (conv2d ?a ?b ?c 0 ?x ?w))')

match "$WORK/resnet50.onnx" "$WORK/resnet.json" --store "$addr" --structural --max-sites 100
json=$(cat "$WORK/resnet.json")
[ "$(json_field "$WORK/resnet.json" operators)" -gt 200 ] || fail "ResNet-50 operators: ${json:0:300}"
grep -q '"used_op_index": true' "$WORK/resnet.json" || fail "the store's operator index was not used: ${json:0:300}"
# The convolution kernel enlargement applies at ResNet-50's stride-1 3x3 convolutions, named by their ONNX nodes.
grep -q "\"rule\": \"$enlarge_id\", \"kind\": \"proved\", \"direction\": \"forward\", \"count\": 13," "$WORK/resnet.json" ||
  fail "conv enlargement on ResNet-50: ${json:0:2000}"
grep -q '"onnx_node": "/layer1/layer1.0/conv2/Conv"' "$WORK/resnet.json" || fail "sites by ONNX node: ${json:0:2000}"
# Conv + relu fusion: ResNet's convolutions carry a bias add before the relu, so the proved
# fusion (conv then relu) applies nowhere; the searches fuse the bias first (structural
# rewrites, every conv), and the relu after it once the bias is fused.
if grep -q "\"rule\": \"$fusion_id\"" "$WORK/resnet.json"; then fail "the proved fusion cannot match a biased conv"; fi
bias=$(grep -o '"rule": "fuse:conv2d+bias\[[^"]*", "kind": "structural", "direction": "forward", "count": [0-9]*' "$WORK/resnet.json" |
  sed 's/.*"count": //' | paste -sd+ | bc)
[ "$bias" = 53 ] || fail "conv+bias fusion at every one of ResNet-50's 53 convolutions, got $bias: ${json:0:3000}"
if grep -q "\"rule\": \"$merge_id\"" "$WORK/resnet.json"; then fail "ResNet-50 has no two matmuls of one input"; fi
check "ResNet-50: conv enlargement at 13 convolutions, conv+bias fusion at 53 (structural)"

match "$WORK/transformer.onnx" "$WORK/transformer.json" --store "$addr"
json=$(cat "$WORK/transformer.json")
# Q, K and V read the same input: the shared-input matmul merge applies to each pair, both ways round.
grep -q "\"rule\": \"$merge_id\", \"kind\": \"proved\", \"direction\": \"forward\", \"count\": 6," "$WORK/transformer.json" ||
  fail "the matmul merge on the transformer layer: ${json:0:2000}"
grep -q '"op": "matmul", "onnx_node": "q_mm' "$WORK/transformer.json" || fail "sites by ONNX node: ${json:0:2000}"
check "transformer layer: the shared-input matmul merge at its Q/K/V matmuls"

# The same from a rules file, matched in the CLI: the same rules tried (both leave out rules with
# no side of the model's operators; the store through its index) at the same places.
"$TASO" rules export --store "$addr" --format proto -o "$WORK/rules.pb" 2>/dev/null || fail "export"
match "$WORK/transformer.onnx" "$WORK/file.json" --rules "$WORK/rules.pb"
diff <(sed 's/"rules_read": [0-9]*, //; s/"used_op_index": [a-z]*, //' "$WORK/transformer.json") \
     <(sed 's/"rules_read": [0-9]*, //; s/"used_op_index": [a-z]*, //' "$WORK/file.json") >"$WORK/diff" ||
  fail "--rules FILE and --store differ: $(cat "$WORK/diff")"
check "--rules FILE gives what the store gives"

# The human report.
"$TASO" rules match "$WORK/transformer.onnx" --store "$addr" --max-sites 1 >"$WORK/match.txt" || fail "text report"
grep -q "^rule $merge_id  forward  6 matches" "$WORK/match.txt" || fail "text report: $(cat "$WORK/match.txt")"
grep -q "^    matmul q_mm" "$WORK/match.txt" || fail "text report sites: $(cat "$WORK/match.txt")"
set +e
"$TASO" rules match "$WORK/rules.txt" --store "$addr" 2>"$WORK/e4"; code=$?
[ $code -eq 2 ] || fail "a file that is not ONNX: exit $code, $(cat "$WORK/e4")"
"$TASO" rules match "$WORK/transformer.onnx" --rules "$WORK/rules.pb" --store "$addr" 2>"$WORK/e5"; code=$?
[ $code -eq 2 ] || fail "--rules with --store: exit $code"
set -e
check "text report and bad input"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true

# Two store shards: the rules on shard 1, listed and matched over both (any order).
mkdir -p "$WORK/two"
for i in 0 1; do
  "$STORE_BIN" --db "$WORK/two/store-$i" --listen 127.0.0.1:0 --port_file "$WORK/two/store-$i.port" \
    --store_index $i --store_count 2 >>"$WORK/two-$i.log" 2>&1 &
  eval "PID$i=\$!"
done
for i in 0 1; do
  for _ in $(seq 1 300); do [ -s "$WORK/two/store-$i.port" ] && break; sleep 0.1; done
  [ -s "$WORK/two/store-$i.port" ] || fail "shard $i did not start: $(tail -3 "$WORK/two-$i.log")"
done
a0="127.0.0.1:$(cat "$WORK/two/store-0.port")"
a1="127.0.0.1:$(cat "$WORK/two/store-1.port")"
"$TASO" rules import "$WORK/rules.txt" --store "$a1,$a0" >/dev/null 2>"$WORK/import2.err" || fail "import: $(cat "$WORK/import2.err")"
list "two shards: --op-all matmul,ewadd" 1 "(matmul 0 ?x@2_4 (ewadd" --op-all matmul,ewadd --store "$a0,$a1"
list "two shards: --pattern" 1 "(relu (conv2d 1 1 0 0" --pattern '(relu (conv2d ?sh ?sw ?pad 0 ?x ?w))' --store "$a1,$a0"
match "$WORK/transformer.onnx" "$WORK/two.json" --store "$a1,$a0"
grep -q "\"rule\": \"$merge_id\", \"kind\": \"proved\", \"direction\": \"forward\", \"count\": 6," "$WORK/two.json" ||
  fail "match over two shards: $(head -c 2000 "$WORK/two.json")"
check "two shards: list and match fan out"
kill "$PID0" "$PID1"; wait "$PID0" "$PID1" 2>/dev/null || true
echo PASS
