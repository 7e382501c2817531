#!/usr/bin/env bash
# `taso rules prune` (the streaming pruner, verifier/streaming_pruning.h) on
# the size-3 job of TASO's default spec over 2 store shards: the rules it
# keeps, their statuses and reasons, and the reduction table are exactly what
# the in-memory pruner (PruneRules over the union, as `taso rules` readers
# compute it) gives; a run killed with SIGKILL mid-way resumes from its
# checkpoint to the same result. Then the same over gRPC (--store), with the
# stores serving a copy of the verified job, killed and resumed likewise; and
# `taso verify`, which prunes the union itself unless told --noprune. And
# its errors.
source tests/generate/lib.sh

"$TASO" generate --max-ops 3 --shards 2 --store-shards 2 --db "$WORK/db" --job job --json >"$WORK/gen.json" \
  2>"$WORK/gen.err" || fail "generation: $(cat "$WORK/gen.err")"
"$TASO" verify --db "$WORK/db" --noprune --json >"$WORK/verify.json" 2>"$WORK/verify.err" ||
  fail "verify: $(cat "$WORK/verify.err")"
grep -q "not their union (--noprune); \`taso rules prune --db" "$WORK/verify.json" &&
  [ "$(json_field "$WORK/verify.json" after_common_subgraph)" = 0 ] ||
  fail "--noprune: the summary should name the pruning left to do, with no table: $(cat "$WORK/verify.json")"
# The reference: each store pruned its slice; the reader prunes the union in memory.
"$TASO" rules export --db "$WORK/db" --status "$ALL_RULE_STATUSES" --format json | sort >"$WORK/ref.json" ||
  fail "exporting the reference"
"$TASO" rules stats --db "$WORK/db" --json >"$WORK/ref-stats.json" || fail "stats of the reference"
ref_table() {  # ref_table FIELD: the in-memory union pruning's figure
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["jobs"][0][sys.argv[2]])' "$WORK/ref-stats.json" "$1"
}
kept=$(ref_table after_common_subgraph)
cp -a "$WORK/db" "$WORK/remote"  # pruned later over gRPC
cp -a "$WORK/db" "$WORK/auto"    # pruned later by `taso verify`
cp -a "$WORK/db" "$WORK/served"  # and by `taso verify --store`
check "verified (--noprune): $(ref_table proved) proved, $kept kept by the in-memory union pruning"

# same_table NAME FILE: FILE's reduction table is the in-memory union pruning's.
same_table() {
  for field in proved after_renaming after_common_subgraph; do
    [ "$(ref_table "$field")" = "$(json_field "$2" "$field")" ] ||
      fail "$1: $field: in memory $(ref_table "$field"), streaming $(json_field "$2" "$field")"
  done
}

# prune_killed_then_resumed NAME WHERE...: `taso rules prune WHERE` in small
# batches, SIGKILLed once a batch is stored, then run again: it resumes, and
# its table and every rule, status and reason equal the in-memory pruner's.
prune_killed_then_resumed() {
  local name=$1 pid
  shift
  "$TASO" rules prune "$@" --batch-rules 200 >"$WORK/$name-killed.out" 2>"$WORK/$name-killed.err" &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q "rules judged" "$WORK/$name-killed.err" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || fail "$name: the pruner finished before it could be killed: $(cat "$WORK/$name-killed.out")"
  wait "$pid" 2>/dev/null || true
  grep -q "rules judged" "$WORK/$name-killed.err" || fail "$name: no batch was stored before the kill: $(cat "$WORK/$name-killed.err")"
  check "$name: killed mid-way: $(head -1 "$WORK/$name-killed.err")"
  "$TASO" rules prune "$@" --batch-rules 200 --json >"$WORK/$name.json" 2>"$WORK/$name.err" ||
    fail "$name: resumed prune: $(cat "$WORK/$name.err")"
  resumed=$(json_field "$WORK/$name.json" resumed_at)
  [ "$resumed" -gt 0 ] || fail "$name: the rerun did not resume: $(cat "$WORK/$name.json")"
  same_table "$name" "$WORK/$name.json"
  "$TASO" rules export "$@" --status "$ALL_RULE_STATUSES" --format json | sort >"$WORK/$name-rules.json" ||
    fail "$name: exporting the pruned rules"
  diff -q "$WORK/ref.json" "$WORK/$name-rules.json" >/dev/null || {
    diff "$WORK/ref.json" "$WORK/$name-rules.json" | head -4
    fail "$name: the streaming pruner's rules differ from the in-memory pruner's"
  }
  check "$name: resumed after $resumed rules: the same $(wc -l <"$WORK/$name-rules.json") rules, statuses and reasons; table $(json_field "$WORK/$name.json" proved) -> $(json_field "$WORK/$name.json" after_renaming) -> $(json_field "$WORK/$name.json" after_common_subgraph)"
}

prune_killed_then_resumed db --db "$WORK/db"

# The stores now say the union is pruned, so readers take the stored statuses.
"$TASO" rules stats --db "$WORK/db" --json >"$WORK/stats.json" || fail "stats"
grep -q "\"after_common_subgraph\": $kept" "$WORK/stats.json" || fail "stats disagree: $(cat "$WORK/stats.json")"

# A fresh run (--restart) gives the same again, and a finished one only reads.
"$TASO" rules prune --db "$WORK/db" --restart --json >"$WORK/restart.json" 2>/dev/null || fail "prune --restart"
[ "$(json_field "$WORK/restart.json" resumed_at)" = 0 ] && [ "$(json_field "$WORK/restart.json" rules_written)" = 0 ] ||
  fail "a restarted prune of a pruned set changed something: $(cat "$WORK/restart.json")"
check "--restart: nothing to change"

# `taso verify` on the job each store pruned alone prunes the union itself,
# streaming, to the same table and rules, and records it in the stores: with
# --db in this process (the stores stopped), with --store over gRPC.
# verify_prunes NAME DB VERIFY-WHERE...
verify_prunes() {
  local name=$1 db=$2
  shift 2
  "$TASO" verify "$@" --json >"$WORK/$name.json" 2>"$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
  same_table "$name" "$WORK/$name.json"
  [ "$(json_field "$WORK/$name.json" pruned_store_shards)" = 2 ] || fail "$name: not recorded: $(cat "$WORK/$name.json")"
  "$TASO" rules export "$@" --status "$ALL_RULE_STATUSES" --format json | sort >"$WORK/$name-rules.json" ||
    fail "$name: exporting what taso verify pruned"
  diff -q "$WORK/ref.json" "$WORK/$name-rules.json" >/dev/null || fail "$name: the pruned rules differ from the in-memory pruner's"
  check "$name: the 2 stores' rules pruned as one set: the same $(wc -l <"$WORK/$name-rules.json") rules, table $kept kept"
}
verify_prunes "taso verify --db" "$WORK/auto" --db "$WORK/auto"

# Errors: a store that is serving the database.
start_store "$WORK/db/store-0"
code=0; "$TASO" rules prune --db "$WORK/db" 2>"$WORK/e2" || code=$?
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
[ "$code" = 1 ] && grep -q "stop it" "$WORK/e2" || fail "a serving store: exit $code, $(cat "$WORK/e2")"
check "errors: a database in use named"

# --- Over gRPC: the stores keep serving (a cluster's store pods), the pruner
# reads the job's rules and writes back only PROVED <-> PRUNED by id.
start_store "$WORK/remote/store-0"; PID0=$STORE_PID; ADDR0="127.0.0.1:$STORE_PORT"
start_store "$WORK/remote/store-1"; PID1=$STORE_PID; ADDR1="127.0.0.1:$STORE_PORT"
trap 'kill "$PID0" "$PID1" 2>/dev/null || true' EXIT
STORES="$ADDR1,$ADDR0"  # any order: the stores say their index
prune_killed_then_resumed store --store "$STORES"
"$TASO" rules stats --store "$STORES" --json >"$WORK/rstats.json" || fail "remote stats"
grep -q "\"after_common_subgraph\": $kept" "$WORK/rstats.json" || fail "remote stats disagree: $(cat "$WORK/rstats.json")"
check "over gRPC: the union's table recorded on both stores"
kill "$PID0" "$PID1"; wait "$PID0" "$PID1" 2>/dev/null || true
start_store "$WORK/served/store-0"; PID0=$STORE_PID; ADDR0="127.0.0.1:$STORE_PORT"
start_store "$WORK/served/store-1"; PID1=$STORE_PID; ADDR1="127.0.0.1:$STORE_PORT"
verify_prunes "taso verify --store" "$WORK/served" --store "$ADDR0,$ADDR1" --db "$WORK/served"

code=0; "$TASO" rules prune --store "$STORES" --wait 2>"$WORK/e3" || code=$?
[ "$code" = 2 ] && grep -q "needs --job" "$WORK/e3" || fail "--wait without --job: exit $code, $(cat "$WORK/e3")"
code=0; "$TASO" rules prune --store "$STORES" --batch-rules 200000 2>"$WORK/e4" || code=$?
[ "$code" = 2 ] && grep -q "at most 100000" "$WORK/e4" || fail "--batch-rules over the cap: exit $code, $(cat "$WORK/e4")"
code=0; "$TASO" rules prune --store "$ADDR0" 2>"$WORK/e5" || code=$?
[ "$code" != 0 ] && grep -q "store" "$WORK/e5" || fail "one shard of two: exit $code, $(cat "$WORK/e5")"
check "errors: --wait without --job, a batch over the stores' cap, a store list missing a shard ($(head -1 "$WORK/e5"))"
echo PASS
