#!/usr/bin/env bash
# `taso rules prune` (the streaming pruner, verifier/streaming_pruning.h) on
# the size-3 job of TASO's default spec over 2 store shards: the rules it
# keeps, their statuses and reasons, and the reduction table are exactly what
# the in-memory pruner (PruneRules over the union, as `taso rules` readers
# compute it) gives; a run killed with SIGKILL mid-way resumes from its
# checkpoint to the same result. And its errors.
source tests/generate/lib.sh

"$TASO" generate --max-ops 3 --shards 2 --store-shards 2 --db "$WORK/db" --job job --json >"$WORK/gen.json" \
  2>"$WORK/gen.err" || fail "generation: $(cat "$WORK/gen.err")"
"$TASO" verify --db "$WORK/db" --json >"$WORK/verify.json" 2>"$WORK/verify.err" || fail "verify: $(cat "$WORK/verify.err")"
# The reference: each store pruned its slice; the reader prunes the union in memory.
"$TASO" rules export --db "$WORK/db" --status "$ALL_RULE_STATUSES" --format json | sort >"$WORK/ref.json" ||
  fail "exporting the reference"
kept=$(json_field "$WORK/verify.json" after_common_subgraph)
check "verified: $(json_field "$WORK/verify.json" proved) proved, $kept kept by the in-memory union pruning"

# Killed mid-way: small batches, SIGKILL once a batch is stored.
"$TASO" rules prune --db "$WORK/db" --batch-rules 200 >"$WORK/killed.out" 2>"$WORK/killed.err" &
pid=$!
for _ in $(seq 1 600); do
  grep -q "rules judged" "$WORK/killed.err" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -9 "$pid" 2>/dev/null || fail "the pruner finished before it could be killed: $(cat "$WORK/killed.out")"
wait "$pid" 2>/dev/null || true
grep -q "rules judged" "$WORK/killed.err" || fail "no batch was stored before the kill: $(cat "$WORK/killed.err")"
check "killed mid-way: $(head -1 "$WORK/killed.err")"

"$TASO" rules prune --db "$WORK/db" --batch-rules 200 --json >"$WORK/prune.json" 2>"$WORK/prune.err" ||
  fail "resumed prune: $(cat "$WORK/prune.err")"
resumed=$(json_field "$WORK/prune.json" resumed_at)
[ "$resumed" -gt 0 ] || fail "the rerun did not resume: $(cat "$WORK/prune.json")"
for field in proved after_renaming after_common_subgraph; do
  [ "$(json_field "$WORK/verify.json" "$field")" = "$(json_field "$WORK/prune.json" "$field")" ] ||
    fail "$field: in memory $(json_field "$WORK/verify.json" "$field"), streaming $(json_field "$WORK/prune.json" "$field")"
done
"$TASO" rules export --db "$WORK/db" --status "$ALL_RULE_STATUSES" --format json | sort >"$WORK/streamed.json" ||
  fail "exporting the pruned rules"
diff -q "$WORK/ref.json" "$WORK/streamed.json" >/dev/null || {
  diff "$WORK/ref.json" "$WORK/streamed.json" | head -4
  fail "the streaming pruner's rules differ from the in-memory pruner's"
}
check "resumed after $resumed rules: the same $(wc -l <"$WORK/streamed.json") rules, statuses and reasons; table $(json_field "$WORK/prune.json" proved) -> $(json_field "$WORK/prune.json" after_renaming) -> $(json_field "$WORK/prune.json" after_common_subgraph)"

# The stores now say the union is pruned, so readers take the stored statuses.
"$TASO" rules stats --db "$WORK/db" --json >"$WORK/stats.json" || fail "stats"
grep -q "\"after_common_subgraph\": $kept" "$WORK/stats.json" || fail "stats disagree: $(cat "$WORK/stats.json")"

# A fresh run (--restart) gives the same again, and a finished one only reads.
"$TASO" rules prune --db "$WORK/db" --restart --json >"$WORK/restart.json" 2>/dev/null || fail "prune --restart"
[ "$(json_field "$WORK/restart.json" resumed_at)" = 0 ] && [ "$(json_field "$WORK/restart.json" rules_written)" = 0 ] ||
  fail "a restarted prune of a pruned set changed something: $(cat "$WORK/restart.json")"
check "--restart: nothing to change"

# Errors: --store, and a store that is serving the database.
code=0; "$TASO" rules prune --store 127.0.0.1:1 2>"$WORK/e1" || code=$?
[ "$code" = 2 ] && grep -q "give --db DIR" "$WORK/e1" || fail "--store: exit $code, $(cat "$WORK/e1")"
start_store "$WORK/db/store-0"
code=0; "$TASO" rules prune --db "$WORK/db" 2>"$WORK/e2" || code=$?
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
[ "$code" = 1 ] && grep -q "stop it" "$WORK/e2" || fail "a serving store: exit $code, $(cat "$WORK/e2")"
check "errors: --store refused, a database in use named"
echo PASS
