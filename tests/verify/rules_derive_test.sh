#!/usr/bin/env bash
# `taso rules derive` end to end: two hand-written rules imported into a real
# store (proved on the way in, so they carry side conditions) derive what the
# two compose to, and not an unrelated rule, of a file in Tensat's syntax;
# --self finds a third rule (their composition) and commutativity redundant.
source tests/generate/lib.sh

cat >"$WORK/ours.txt" <<'RULES'
(relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_4_3_3)
(ewadd ?a@1_4_5_5 ?b@1_4_5_5)=>(ewadd ?b@1_4_5_5 ?a@1_4_5_5)
RULES
# Tensat's syntax: no shapes, no weights; one rule we cannot express.
printf '%s' '(ewadd (relu (conv2d 1 1 0 0 ?input_0 ?input_1)) ?input_2)=>(ewadd ?input_2 (conv2d 1 1 0 2 ?input_0 ?input_1))
(matmul 0 ?input_0 (ewadd ?input_1 ?input_2))=>(ewadd (matmul 0 ?input_0 ?input_1) (matmul 0 ?input_0 ?input_2))
(dropout ?input_0)=>?input_0' >"$WORK/tensat.txt"

mkdir -p "$WORK/db"
start_store "$WORK/db/store-0"
addr="127.0.0.1:$STORE_PORT"
"$TASO" rules import "$WORK/ours.txt" --store "$addr" >"$WORK/import.out" 2>&1 || fail "import: $(cat "$WORK/import.out")"
grep -q "imported 2 rules (2 proved)" "$WORK/import.out" || fail "import: $(cat "$WORK/import.out")"
check "imported 2 proved rules"

"$TASO" rules derive --against "$WORK/tensat.txt" --store "$addr" --json >"$WORK/derive.json" 2>"$WORK/derive.err" ||
  fail "derive exited $?: $(cat "$WORK/derive.err")"
head -1 "$WORK/derive.json" >"$WORK/totals.json"
field() { json_field "$WORK/totals.json" "$1"; }
[ "$(field our_rules)" = 2 ] && [ "$(field rules)" = 3 ] && [ "$(field expressible)" = 2 ] ||
  fail "totals: $(cat "$WORK/totals.json")"
[ "$(field derived)" = 1 ] && [ "$(field saturated)" = 1 ] && [ "$(field not_expressible)" = 1 ] ||
  fail "outcomes: $(cat "$WORK/derive.json")"
grep '"rule": "line 1"' "$WORK/derive.json" | grep -q '"outcome": "derived"' || fail "line 1: $(cat "$WORK/derive.json")"
grep '"rule": "line 2"' "$WORK/derive.json" | grep -q '"outcome": "saturated"' || fail "line 2: $(cat "$WORK/derive.json")"
grep '"rule": "line 3"' "$WORK/derive.json" | grep -q 'no dropout' || fail "line 3: $(cat "$WORK/derive.json")"
check "the composition derived, the unrelated rule saturated without it, dropout not expressible"

"$TASO" rules derive --against "$WORK/tensat.txt" --store "$addr" --mode lhs-and-rhs >"$WORK/both.txt" 2>&1 ||
  fail "derive --mode lhs-and-rhs: $(cat "$WORK/both.txt")"
grep -q "derives 1 of 2 (50.0%)" "$WORK/both.txt" || fail "lhs-and-rhs: $(cat "$WORK/both.txt")"
check "lhs-and-rhs mode and the human table"

# The hand-written list in Tensat's syntax (bench/testdata) reads whole:
# every line is derived, not derived, or not expressible with a reason.
"$TASO" rules derive --against bench/testdata/tensat_rules.txt --store "$addr" --json >"$WORK/list.json" 2>"$WORK/list.err" ||
  fail "derive the list: $(cat "$WORK/list.err")"
head -1 "$WORK/list.json" >"$WORK/totals.json"
[ "$(field rules)" = 54 ] && [ "$(field not_expressible)" = 2 ] && [ "$(field errors)" = 0 ] ||
  fail "the list: $(cat "$WORK/totals.json")"
grep -q '"outcome": "not_expressible", "text": "(noop' "$WORK/list.json" || fail "noop: $(cat "$WORK/list.json")"
grep '"rule": "line 25"' "$WORK/list.json" | grep -q '"outcome": "derived"' || fail "line 25, conv+relu: $(cat "$WORK/list.json")"
grep '"rule": "line 1"' "$WORK/list.json" | grep -q '"outcome": "derived"' || fail "line 1, x+y: $(cat "$WORK/list.json")"
check "the checked-in Tensat list: 54 rules, 2 not expressible, $(field derived) derived by the 2 rules"

# Two parts of the same list (rules 0, 2, 4, ... and 1, 3, 5, ...) add up to it, rule for rule.
whole_derived=$(field derived)
for i in 0 1; do
  "$TASO" rules derive --against bench/testdata/tensat_rules.txt --store "$addr" --part "$i/2" --json \
    >"$WORK/part$i.json" 2>"$WORK/part$i.err" || fail "part $i/2: $(cat "$WORK/part$i.err")"
done
parts_rules=0; parts_derived=0
for i in 0 1; do
  head -1 "$WORK/part$i.json" >"$WORK/totals.json"
  grep -q "\"part\": \"$i/2\"" "$WORK/totals.json" || fail "part field: $(cat "$WORK/totals.json")"
  parts_rules=$((parts_rules + $(field rules))); parts_derived=$((parts_derived + $(field derived)))
done
[ "$(head -1 "$WORK/part0.json" | grep -o '"rules": [0-9]*')" = '"rules": 27' ] || fail "part 0/2 of 54: $(head -1 "$WORK/part0.json")"
[ $parts_rules = 54 ] && [ $parts_derived = "$whole_derived" ] ||
  fail "parts: $parts_rules rules, $parts_derived derived; whole: 54, $whole_derived"
diff <(tail -n +2 "$WORK/list.json" | sed 's/"seconds": [0-9.e-]*//; s/"time_s": [0-9.e-]*//' | sort) \
     <(tail -q -n +2 "$WORK/part0.json" "$WORK/part1.json" | sed 's/"seconds": [0-9.e-]*//; s/"time_s": [0-9.e-]*//' | sort) \
     >"$WORK/parts.diff" || fail "the parts' rules differ from the whole's: $(head -c 2000 "$WORK/parts.diff")"
check "--part 0/2 and 1/2 derive the list's 54 rules between them, the same outcomes"

# Their composition, proved too, is redundant: --self derives it from the others.
printf '%s\n' '(ewadd (relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_4_3_3)) ?b@1_4_5_5)=>(ewadd ?b@1_4_5_5 (conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_4_3_3))' \
  >"$WORK/composed.txt"
"$TASO" rules import "$WORK/composed.txt" --store "$addr" >"$WORK/import2.out" 2>&1 ||
  fail "import: $(cat "$WORK/import2.out")"
grep -q "1 proved" "$WORK/import2.out" || fail "the composition was not proved: $(cat "$WORK/import2.out")"
"$TASO" rules export --store "$addr" --format proto -o "$WORK/ours.pb" 2>/dev/null || fail "export"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
"$TASO" rules derive --self --rules "$WORK/ours.pb" --json >"$WORK/self.json" 2>"$WORK/self.err" ||
  fail "derive --self exited $?: $(cat "$WORK/self.err")"
head -1 "$WORK/self.json" >"$WORK/totals.json"
# Commutativity is redundant too: the e-graph holds b + a and a + b as one e-node,
# so it is derived before any rewrite runs. The conv+relu rule is the one kept.
[ "$(field rules)" = 3 ] && [ "$(field derived)" = 2 ] || fail "--self: $(cat "$WORK/self.json")"
grep '"outcome": "derived"' "$WORK/self.json" | grep -q "ewadd (relu" || fail "--self: composition: $(cat "$WORK/self.json")"
grep '"outcome": "derived"' "$WORK/self.json" | grep '=>(ewadd ?b@1_4_5_5 ?a@1_4_5_5)' | grep -q '"iterations": 0' ||
  fail "--self: commutativity: $(cat "$WORK/self.json")"
grep '"outcome": "saturated"' "$WORK/self.json" | grep -q '"text": "(relu' ||
  fail "--self: conv+relu: $(cat "$WORK/self.json")"
check "--self: of 3 rules, the composition and commutativity are redundant, conv+relu is not"

set +e
"$TASO" rules derive --rules "$WORK/ours.pb" 2>"$WORK/e1"; code=$?
[ $code -eq 2 ] && grep -q "give one of --against" "$WORK/e1" || fail "no set: exit $code, $(cat "$WORK/e1")"
"$TASO" rules derive --self --rules "$WORK/ours.pb" --mode rhs 2>"$WORK/e2"; code=$?
[ $code -eq 2 ] && grep -q "unknown --mode 'rhs'" "$WORK/e2" || fail "bad mode: exit $code, $(cat "$WORK/e2")"
printf '%s' '(ewadd ?a ?b)' >"$WORK/bad.txt"
"$TASO" rules derive --against "$WORK/bad.txt" --rules "$WORK/ours.pb" 2>"$WORK/e3"; code=$?
[ $code -eq 1 ] && grep -q "line 1: a rule is LHS=>RHS" "$WORK/e3" || fail "bad file: exit $code, $(cat "$WORK/e3")"
"$TASO" rules derive --self --rules "$WORK/ours.pb" --part 2/2 2>"$WORK/e4"; code=$?
[ $code -eq 2 ] && grep -q "give I/N with 0 <= I < N" "$WORK/e4" || fail "bad part: exit $code, $(cat "$WORK/e4")"
"$TASO" rules derive --self --rules "$WORK/ours.pb" --part half 2>"$WORK/e5"; code=$?
[ $code -eq 2 ] && grep -q "takes I/N" "$WORK/e5" || fail "bad part text: exit $code, $(cat "$WORK/e5")"
set -e
check "bad options and a file that is no rule list are refused with a reason"
echo "PASS"
