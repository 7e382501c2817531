#!/usr/bin/env bash
# `taso rules fuzz` against a real store: hand-written rules are imported
# (verified on the way in, so proved ones carry their side conditions), then
# fuzzed at random shapes. Counts come from the JSON's first line.
source tests/generate/lib.sh

cat >"$WORK/rules.txt" <<'RULES'
; true: proved at these shapes, fuzzed at others
(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)
(relu (conv2d 1 1 0 0 ?i@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?i@1_4_5_5 ?w@4_4_3_3)
(matmul 0 ?x@2_4 (ewadd ?y@4_4 ?z@4_4))=>(ewadd (matmul 0 ?x@2_4 ?y@4_4) (matmul 0 ?x@2_4 ?z@4_4))
; false: rejected by the import's pre-check, so never proved and carries no conditions
(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))
RULES

mkdir -p "$WORK/db"
start_store "$WORK/db/store-0"
addr="127.0.0.1:$STORE_PORT"
"$TASO" rules import "$WORK/rules.txt" --store "$addr" >"$WORK/import.out" 2>"$WORK/import.err" ||
  fail "import: $(cat "$WORK/import.err")"
grep -q "imported 4 rules (3 proved, 1 rejected_precheck)" "$WORK/import.out" || fail "import: $(cat "$WORK/import.out")"
check "imported 3 proved rules and 1 rejected one"

"$TASO" rules fuzz --store "$addr" --instances 10 --seed 3 --json >"$WORK/fuzz.json" 2>"$WORK/fuzz.err" ||
  fail "fuzz exited $?: $(cat "$WORK/fuzz.err") $(head -c 2000 "$WORK/fuzz.json")"
head -1 "$WORK/fuzz.json" >"$WORK/totals.json"
field() { json_field "$WORK/totals.json" "$1"; }
[ "$(field rules)" = 3 ] && [ "$(field rules_fuzzed)" = 3 ] || fail "expected 3 proved rules fuzzed: $(cat "$WORK/totals.json")"
[ "$(field mismatches)" = 0 ] || fail "mismatches: $(cat "$WORK/fuzz.json")"
[ $(( $(field instances_run) + $(field instances_not_found) )) -eq 30 ] || fail "instances: $(cat "$WORK/totals.json")"
[ "$(field instances_run)" -ge 25 ] || fail "too few instances found: $(cat "$WORK/totals.json")"
[ "$(field instances_at_other_shapes)" -ge 15 ] || fail "instances stay at the rules' shapes: $(cat "$WORK/totals.json")"
[ "$(field instances_int32)" = "$(field instances_run)" ] || fail "every instance also runs in int32: $(cat "$WORK/totals.json")"
[ "$(grep -c '"outcome": "fuzzed"' "$WORK/fuzz.json")" -eq 3 ] || fail "per-rule entries: $(cat "$WORK/fuzz.json")"
check "3 proved rules: $(field instances_run) instances, $(field instances_at_other_shapes) at other shapes, 0 mismatches"

# The same seed gives the same report (but its wall time).
"$TASO" rules fuzz --store "$addr" --instances 10 --seed 3 --json >"$WORK/again.json" || fail "second fuzz"
diff <(sed 's/"seconds": [0-9.]*//' "$WORK/fuzz.json") <(sed 's/"seconds": [0-9.]*//' "$WORK/again.json") >/dev/null ||
  fail "the same seed gave another report"
check "deterministic given the seed"

# A rule without conditions is reported, not fuzzed, and fails nothing.
"$TASO" rules fuzz --store "$addr" --status proved,rejected_precheck --instances 5 --json >"$WORK/all.json" ||
  fail "fuzz over every status exited $?"
head -1 "$WORK/all.json" >"$WORK/totals.json"
[ "$(field rules)" = 4 ] && [ "$(field rules_not_fuzzed)" = 1 ] || fail "not fuzzed: $(cat "$WORK/totals.json")"
grep -q '"outcome": "no_conditions"' "$WORK/all.json" || fail "the unproved rule's outcome: $(cat "$WORK/all.json")"
check "the rejected rule is reported as having no conditions"

set +e
"$TASO" rules fuzz --store "$addr" --instances 0 2>"$WORK/e1"; code=$?
[ $code -eq 2 ] && grep -q "positive" "$WORK/e1" || fail "--instances 0: exit $code, $(cat "$WORK/e1")"
"$TASO" rules fuzz extra --store "$addr" 2>"$WORK/e2"; code=$?
[ $code -eq 2 ] || fail "an extra argument: exit $code"
set -e
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true

# --db starts a store of its own; the human table.
"$TASO" rules fuzz --db "$WORK/db" --instances 5 >"$WORK/table.txt" 2>"$WORK/table.err" ||
  fail "fuzz --db exited $?: $(cat "$WORK/table.err")"
grep -q "fuzzed 3 of 3 rules" "$WORK/table.txt" && grep -Eq "mismatches +0" "$WORK/table.txt" ||
  fail "table: $(cat "$WORK/table.txt")"
check "--db and the table"
echo "PASS"
