#!/usr/bin/env bash
# The rule database's trust over real gRPC between processes: a client that
# sends a rule as proved without a proof (PutRules), a leaseholder that
# reports a rule about graphs outside its lease, or its own pair's proof with
# a side condition widened (ReportVerdicts), is refused,
# and the optimizer's listing never shows the planted rule. A true rule sent
# as proved is proved again by the store, and `taso rules import` still works.
source tests/generate/lib.sh
PLANT="$PWD/tests/verify/plant_rule"
trap 'if [ -n "${STORE_PID:-}" ]; then kill "$STORE_PID" 2>/dev/null || true; fi' EXIT

"$TASO" generate --max-ops 2 --shards 1 --db "$WORK/db" --job job --json >"$WORK/gen.json" 2>"$WORK/gen.err" ||
  fail "generation: $(cat "$WORK/gen.err")"
start_store "$WORK/db/store-0"
addr="127.0.0.1:$STORE_PORT"

FALSE_RULE='(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))'
TRUE_RULE='(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)'
set +e
"$PLANT" "$addr" put "$FALSE_RULE" >/dev/null 2>"$WORK/put.err"; code=$?
[ $code -eq 1 ] && grep -q "INVALID_ARGUMENT" "$WORK/put.err" && grep -q "did not prove it" "$WORK/put.err" ||
  fail "a planted proved rule: exit $code, $(cat "$WORK/put.err")"
"$PLANT" "$addr" report "$FALSE_RULE" job >/dev/null 2>"$WORK/report.err"; code=$?
[ $code -eq 1 ] && grep -q "is not the pair's rule" "$WORK/report.err" ||
  fail "a foreign verdict: exit $code, $(cat "$WORK/report.err")"
# A real proof of the leased pair, reported with a side condition opened to
# "any value": the store proves the pair again and derives other conditions.
"$PLANT" "$addr" widen job >/dev/null 2>"$WORK/widen.err"; code=$?
[ $code -eq 1 ] && grep -q "INVALID_ARGUMENT" "$WORK/widen.err" &&
  grep -q "side conditions are not the ones the store's own proof derives" "$WORK/widen.err" ||
  fail "a verdict with widened conditions: exit $code, $(cat "$WORK/widen.err")"
set -e
"$TASO" rules list --store "$addr" --status proved,pruned >"$WORK/proved.rules" || fail "listing proved rules"
! grep -qF "$FALSE_RULE" "$WORK/proved.rules" || fail "the planted rule is served: $(cat "$WORK/proved.rules")"
"$TASO" rules list --store "$addr" --job planted --status proved,pruned,candidate,unknown,refuted,rejected_precheck \
  >"$WORK/planted.rules" || fail "listing planted rules"
[ ! -s "$WORK/planted.rules" ] || fail "something planted was stored: $(cat "$WORK/planted.rules")"
check "planted proofs and widened conditions refused over PutRules and ReportVerdicts; none listed"

"$PLANT" "$addr" put "$TRUE_RULE" >"$WORK/true.out" 2>&1 || fail "a true rule sent as proved: $(cat "$WORK/true.out")"
id=$(sed -n 's/^accepted //p' "$WORK/true.out")
"$TASO" rules show "$id" --store "$addr" >"$WORK/true.show" || fail "show $id"
grep -q "proved" "$WORK/true.show" && grep -q "verified by taso_rules_db" "$WORK/true.show" &&
  ! grep -q "forged" "$WORK/true.show" || fail "the store's proof is not what was stored: $(cat "$WORK/true.show")"
check "a true rule sent as proved is stored with the store's own proof"

printf '%s\n%s\n' "$TRUE_RULE" "$FALSE_RULE" >"$WORK/mine.txt"
"$TASO" rules import "$WORK/mine.txt" --store "$addr" >"$WORK/import.out" 2>"$WORK/import.err" ||
  fail "import: $(cat "$WORK/import.err")"
grep -q "imported 2 rules (1 proved, 1 rejected_precheck)" "$WORK/import.out" ||
  fail "import: $(cat "$WORK/import.out")"
check "import: proved by the store, the false rule kept as rejected"

# The refused report cost the job nothing: its lease runs out and the class is verified.
"$TASO" verify --store "$addr" --db "$WORK/db" --json >"$WORK/verify.json" 2>"$WORK/verify.err" ||
  fail "verify after the refused report: $(cat "$WORK/verify.err")"
"$TASO" rules list --store "$addr" --status proved,pruned >"$WORK/after.rules" || fail "listing after verify"
! grep -qF "$FALSE_RULE" "$WORK/after.rules" || fail "the planted rule is served after verify"
check "the job verifies after the refused report: $(json_field "$WORK/verify.json" proved) proved"
echo "PASS"
