#!/usr/bin/env bash
# Verification end to end with real processes on loopback, at size 3 of
# TASO's default spec: `taso verify` undisturbed, then a run whose verifier is
# killed with SIGKILL mid-job and finished by `taso verify --store`. The
# final rule set (every rule, its status and pruning) must be the same.
# Also: the rules commands over it, and their errors.
source tests/generate/lib.sh
VERIFIER_BIN="$PWD/bin/taso_verifier"

"$TASO" generate --max-ops 3 --shards 2 --db "$WORK/gen" --job job --json >"$WORK/gen.json" 2>"$WORK/gen.err" ||
  fail "generation: $(cat "$WORK/gen.err")"
cp -r "$WORK/gen" "$WORK/ref"
cp -r "$WORK/gen" "$WORK/dist"
check "generated $(json_field "$WORK/gen.json" candidate_pairs) candidate pairs"

"$TASO" verify --db "$WORK/ref" --json >"$WORK/ref.json" 2>"$WORK/ref.err" || fail "reference verify: $(cat "$WORK/ref.err")"
"$TASO" rules list --db "$WORK/ref" --status "$ALL_RULE_STATUSES" >"$WORK/ref.rules" || fail "listing the reference rules"
proved=$(json_field "$WORK/ref.json" proved)
unknown=$(json_field "$WORK/ref.json" unknown)
[ "$proved" -gt 0 ] || fail "nothing proved"
# At least 99% of the pairs sent to Z3 are proved.
[ $((proved * 100)) -ge $(( (proved + unknown) * 99 )) ] || fail "only $proved proved, $unknown unknown"
check "undisturbed: $proved proved, $unknown unknown, $(wc -l <"$WORK/ref.rules") rules stored"

# The rule set built into taso (rules/default_rules.pb) is exactly what this
# pipeline proves and prunes: the same content digest in an optimizer's report.
"$TASO" rules export --db "$WORK/ref" --format proto -o "$WORK/ref.pb" 2>/dev/null || fail "exporting the reference rules"
mkdir -p "$WORK/models" && /usr/bin/python3 tests/optimize/make_models.py "$WORK/models" || fail "making a model"
digest() {  # the report's rules_digest of `taso optimize` with the given rule flags
  optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/digest.onnx" --backend analytic --cache-dir none \
    --time-limit 1 --json -q "$@" | sed -n 's/.*"rules_digest":"\([0-9a-f]*\)".*/\1/p'
}
pipeline=$(digest --rules "$WORK/ref.pb")
builtin=$(digest)
[ ${#pipeline} -eq 64 ] && [ "$pipeline" = "$builtin" ] ||
  fail "the built-in rules (sha256 $builtin) are not what generate and verify produce (sha256 $pipeline): regenerate rules/default_rules.pb with \`taso rules export --format proto\`"
check "the built-in rule set is this pipeline's ($(json_field "$WORK/ref.json" after_common_subgraph) rules, sha256 ${pipeline:0:16})"

start_store "$WORK/dist/store-0"
addr="127.0.0.1:$STORE_PORT"
"$VERIFIER_BIN" --store "$addr" --job job --threads 1 --lease_ms 3000 --worker_id victim \
  >"$WORK/victim.log" 2>&1 &
victim=$!
for _ in $(seq 1 100); do
  "$TASO" rules stats --store "$addr" >"$WORK/stats.txt" 2>/dev/null || true
  grep -q "classes verified" "$WORK/stats.txt" && ! grep -q " 0 / " "$WORK/stats.txt" && break
  sleep 0.1
done
sleep 1
kill -9 "$victim" 2>/dev/null || fail "the verifier finished before it could be killed"
wait "$victim" 2>/dev/null || true
grep -q "JOB_STATE_VERIFYING" "$WORK/stats.txt" || fail "job was not mid-verification: $(cat "$WORK/stats.txt")"
check "killed a verifier mid-job: $(grep -o '[0-9]* / [0-9]* classes verified' "$WORK/stats.txt")"

"$TASO" verify --store "$addr" --db "$WORK/dist" --lease-ms 3000 --json >"$WORK/dist.json" 2>"$WORK/dist.err" ||
  fail "resumed verify: $(cat "$WORK/dist.err")"
same_rules "$addr" "$WORK/dist.json" "after the kill"
check "after the kill: the same $(wc -l <"$WORK/dist.rules") rules, statuses and reduction table"

# The rules commands agree with the table.
kept=$(json_field "$WORK/ref.json" after_common_subgraph)
"$TASO" rules export --store "$addr" --format sexpr >"$WORK/rules.sexpr" || fail "export sexpr"
[ "$(wc -l <"$WORK/rules.sexpr")" -eq "$kept" ] || fail "sexpr export has $(wc -l <"$WORK/rules.sexpr") rules, table says $kept"
grep -q "=>" "$WORK/rules.sexpr" || fail "sexpr export has no rules"
"$TASO" rules export --store "$addr" --format proto -o "$WORK/rules.pb" 2>/dev/null || fail "export proto"
[ -s "$WORK/rules.pb" ] || fail "empty proto export"
"$TASO" rules stats --store "$addr" --json >"$WORK/stats.json" || fail "stats"
grep -q "\"proved\": $kept" "$WORK/stats.json" || fail "stats disagree with the table: $(cat "$WORK/stats.json")"
id=$(head -1 "$WORK/ref.rules" | cut -d' ' -f1)
"$TASO" rules show "$id" --store "$addr" >"$WORK/show.txt" || fail "show $id"
grep -q "source:" "$WORK/show.txt" || fail "show printed no graphs"
check "stats, list, show and export agree ($kept rules served)"

# Hand-written rules are verified before they are stored.
cat >"$WORK/mine.txt" <<'RULES'
; commutativity holds; relu is not additive
(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)
(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))
RULES
"$TASO" rules import "$WORK/mine.txt" --store "$addr" >"$WORK/import.out" 2>"$WORK/import.err" ||
  fail "import: $(cat "$WORK/import.err")"
grep -q "imported 2 rules (1 proved, 1 rejected_precheck)" "$WORK/import.out" || fail "import: $(cat "$WORK/import.out")"
grep -q "differs" "$WORK/import.err" || fail "the rejected rule's reason is not shown: $(cat "$WORK/import.err")"
"$TASO" rules list --store "$addr" --job import:mine.txt --status proved,rejected_precheck >"$WORK/imported.rules"
[ "$(wc -l <"$WORK/imported.rules")" -eq 2 ] || fail "imported rules not listed: $(cat "$WORK/imported.rules")"
check "import: the true rule proved, the false one rejected with a counterexample"

# Errors a user can act on.
set +e
"$TASO" rules show rnosuchrule --store "$addr" 2>"$WORK/e1"; code=$?
[ $code -eq 4 ] && grep -q "no rule" "$WORK/e1" || fail "unknown rule: exit $code, $(cat "$WORK/e1")"
"$TASO" rules export --store "$addr" --format xml 2>"$WORK/e2"; code=$?
[ $code -eq 2 ] && grep -q "format" "$WORK/e2" || fail "bad format: exit $code"
"$TASO" rules stats --store 127.0.0.1:1 2>"$WORK/e3"; code=$?
[ $code -eq 3 ] && grep -q "unreachable" "$WORK/e3" || fail "unreachable store: exit $code, $(cat "$WORK/e3")"
"$TASO" verify --db "$WORK/nothing" 2>"$WORK/e4"; code=$?
[ $code -eq 2 ] && grep -q "taso generate" "$WORK/e4" || fail "missing database: exit $code, $(cat "$WORK/e4")"
echo "(ewadd ?x@2_4 ?y)=>?x@2_4" >"$WORK/bad.txt"
"$TASO" rules import "$WORK/bad.txt" --store "$addr" 2>"$WORK/e5"; code=$?
[ $code -eq 2 ] && grep -q "line 1" "$WORK/e5" || fail "bad import file: exit $code, $(cat "$WORK/e5")"
set -e
check "bad ids, formats, addresses, databases and rule files give clear errors"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
echo "PASS"
