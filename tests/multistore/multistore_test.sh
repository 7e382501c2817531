#!/usr/bin/env bash
# One job over three store shards, as machines A and B would run it: the
# stores started with their index, `taso job create`, generators for
# disjoint shard lists launched separately (each listing the stores in its
# own order), two taso_verifier processes over all stores, and the exported
# rule set compared with a single-process run of the same job, first pruned
# as one set by the reader in memory, then by `taso rules prune` in the
# stores and streamed from them. Also: a store refuses a batch routed by
# another order, a store will not start as another index, and a store list
# that misses a shard is refused.
source tests/generate/lib.sh
VERIFIER_BIN="$PWD/bin/taso_verifier"
SEND_BATCH="$PWD/tests/multistore/send_batch"
SIZE=2
SHARDS=3

# The reference: everything in one process tree, one store.
"$TASO" generate --max-ops $SIZE --shards $SHARDS --db "$WORK/single" --job mm --json >"$WORK/single.json" \
  2>"$WORK/single.err" || fail "single generate: $(cat "$WORK/single.err")"
"$TASO" verify --db "$WORK/single" --job mm --json >"$WORK/single-verify.json" 2>"$WORK/single-verify.err" ||
  fail "single verify: $(cat "$WORK/single-verify.err")"
"$TASO" rules export --db "$WORK/single" >"$WORK/single.rules" || fail "single export"
[ -s "$WORK/single.rules" ] || fail "the single-process run proved no rules"
check "single process: $(wc -l <"$WORK/single.rules") rules after pruning"

# Three stores, each told its index (as a StatefulSet ordinal would).
PIDS=()
ADDR=()
for i in 0 1 2; do
  dir="$WORK/store$i"
  "$STORE_BIN" --db "$dir" --listen 127.0.0.1:0 --port_file "$dir.port" --store_index $i --store_count 3 \
    --write_buffer_mb 8 >"$dir.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 300); do [ -s "$dir.port" ] && break; sleep 0.1; done
  [ -s "$dir.port" ] || fail "store $i did not start: $(tail -3 "$dir.log")"
  ADDR+=("127.0.0.1:$(cat "$dir.port")")
done
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
A=${ADDR[0]} B=${ADDR[1]} C=${ADDR[2]}

"$TASO" job create --store "$C,$A,$B" --max-ops $SIZE --shards $SHARDS --job mm >"$WORK/create.out" \
  2>"$WORK/create.err" || fail "job create: $(cat "$WORK/create.err")"
grep -q "^job mm: 3 shard(s) over 3 store(s)" "$WORK/create.out" || fail "job create said: $(cat "$WORK/create.out")"
grep -q "max_ops: $SIZE" "$WORK/create.out" || fail "job create did not print the spec: $(cat "$WORK/create.out")"
check "job create printed the job id and its spec"

# A store list that misses a shard would lose classes: refused.
if "$TASO" generate --job mm --shards-here 0 --store "$A,$B" --db "$WORK/short" >"$WORK/short.out" 2>&1; then
  fail "a generator given two of three stores ran"
fi
grep -q "list every store" "$WORK/short.out" || fail "incomplete store list: $(cat "$WORK/short.out")"
check "a store list missing a shard is refused"

# Machines A and B: disjoint shard lists, separate launches, different orders.
"$TASO" generate --job mm --shards-here 0,2 --store "$B,$C,$A" --db "$WORK/machineA" >"$WORK/a.out" 2>"$WORK/a.err" &
gen_a=$!
"$TASO" generate --job mm --shards-here 1 --store "$A,$B,$C" --db "$WORK/machineB" --json >"$WORK/b.out" \
  2>"$WORK/b.err" &
gen_b=$!
wait $gen_a || fail "machine A's shards: $(cat "$WORK/a.err")"
wait $gen_b || fail "machine B's shards: $(cat "$WORK/b.err")"
check "machine A: $(cat "$WORK/a.out")"
check "machine B: $(cat "$WORK/b.out")"
# --json: one line naming the shards run here and the graphs they enumerated (bench/estimate.py reads it).
grep -q '"shards_here": \[1\]' "$WORK/b.out" || fail "machine B's JSON: $(cat "$WORK/b.out")"
grep -q '"graphs_enumerated_here": [1-9]' "$WORK/b.out" || fail "machine B's JSON counts no graphs: $(cat "$WORK/b.out")"
check "generate --shards-here --json names its shards and the graphs they enumerated"
"$TASO" job status --job mm --store "$B,$A,$C" --json >"$WORK/status.json" || fail "job status"
grep -q '"complete":true' "$WORK/status.json" || grep -q '"complete": true' "$WORK/status.json" ||
  fail "job not complete after every shard ran: $(cat "$WORK/status.json")"
grep -q '"shards_done":\[0,1,2\]' "$WORK/status.json" || grep -q '"shards_done": \[0, 1, 2\]' "$WORK/status.json" ||
  fail "shards done: $(cat "$WORK/status.json")"
check "job status: complete, shards 0,1,2 done"


# Two verifiers, each over all three stores.
"$VERIFIER_BIN" --store "$C,$B,$A" --job mm --worker_id v1 >"$WORK/v1.log" 2>&1 &
v1=$!
"$VERIFIER_BIN" --store "$A,$B,$C" --job mm --worker_id v2 >"$WORK/v2.log" 2>&1 &
v2=$!
wait $v1 || fail "verifier 1: $(tail -5 "$WORK/v1.log")"
wait $v2 || fail "verifier 2: $(tail -5 "$WORK/v2.log")"
"$TASO" rules stats --store "$A,$B,$C" >"$WORK/stats.out" || fail "rules stats over the shards"
grep -q "job mm: JOB_STATE_DONE" "$WORK/stats.out" || fail "job not verified on every store: $(cat "$WORK/stats.out")"
check "two verifiers finished the job on every store"

"$TASO" rules export --store "$B,$C,$A" >"$WORK/multi.rules" || fail "export over the shards"
diff "$WORK/single.rules" "$WORK/multi.rules" >"$WORK/rules.diff" || {
  head -5 "$WORK/rules.diff"
  fail "the three-store rule set differs from the single-process one"
}
check "three stores: the same $(wc -l <"$WORK/multi.rules") rules as one process"
# The verifiers ran by hand, so no one pruned the job as one set: the reader
# pruned it in memory, up to --union-prune-max-rules, and refuses above it.
code=0; "$TASO" rules export --store "$A,$B,$C" --union-prune-max-rules 1 >/dev/null 2>"$WORK/cap.err" || code=$?
[ "$code" = 1 ] && grep -q "not pruned as one set.*taso rules prune --store" "$WORK/cap.err" ||
  fail "a job over --union-prune-max-rules: exit $code, $(cat "$WORK/cap.err")"
check "a job to prune in memory over --union-prune-max-rules is refused, naming taso rules prune"
# Pruned in the stores, the rules stream from them, filtered there and merged
# by id (a page per store in memory): the same set, any limit, and stats agree.
"$TASO" rules prune --store "$C,$A,$B" --job mm >"$WORK/prune.out" 2>&1 || fail "rules prune: $(cat "$WORK/prune.out")"
"$TASO" rules export --store "$A,$C,$B" --union-prune-max-rules 0 >"$WORK/streamed.rules" 2>"$WORK/streamed.err" ||
  fail "export after prune: $(cat "$WORK/streamed.err")"
diff -q "$WORK/single.rules" "$WORK/streamed.rules" >/dev/null || fail "the streamed rules differ from one process's"
"$TASO" rules stats --store "$A,$B,$C" --json --union-prune-max-rules 0 >"$WORK/stats.json" || fail "stats after prune"
[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rules"]["proved"])' "$WORK/stats.json")" = \
  "$(wc -l <"$WORK/single.rules")" ] ||
  fail "stats count other than $(wc -l <"$WORK/single.rules") proved: $(cat "$WORK/stats.json")"
"$TASO" rules list --store "$A,$B,$C" --status pruned --limit 3 >"$WORK/pruned.list" || fail "list pruned"
[ "$(wc -l <"$WORK/pruned.list")" = 3 ] && [ "$(cut -d' ' -f1 "$WORK/pruned.list" | sort)" = "$(cut -d' ' -f1 "$WORK/pruned.list")" ] ||
  fail "list --status pruned --limit 3: $(cat "$WORK/pruned.list")"
"$TASO" rules show "$(head -1 "$WORK/pruned.list" | cut -d' ' -f1)" --store "$B,$C,$A" >"$WORK/show.out" ||
  fail "show a pruned rule"
grep -q "^rule .*  pruned" "$WORK/show.out" || fail "show: $(head -3 "$WORK/show.out")"
check "pruned in the stores: the same $(wc -l <"$WORK/streamed.rules") rules streamed, stats, list --limit and show agree"
# A batch routed by another order is refused, naming both routings.
"$TASO" job create --store "$A,$B,$C" --max-ops 1 --shards 1 --job probe >/dev/null 2>&1 || fail "probe job"
if "$SEND_BATCH" --store "$B" --job probe --store_index 0 --store_count 3 >"$WORK/refused.out" 2>&1; then
  fail "store 1 took a batch routed for store 0"
fi
grep -q "^9 .*routed for store 0 of 3.*this is store 1 of 3" "$WORK/refused.out" ||
  fail "refusal was: $(cat "$WORK/refused.out")"
check "store 1 refuses a batch routed for store 0 (FAILED_PRECONDITION)"
"$SEND_BATCH" --store "$B" --job probe --store_index 1 --store_count 3 >"$WORK/taken.out" 2>&1 ||
  fail "store 1 refused its own batch: $(cat "$WORK/taken.out")"
check "store 1 takes a batch routed for it"

# A store keeps its index: restarting it as another one fails.
kill "${PIDS[1]}"; wait "${PIDS[1]}" 2>/dev/null || true
if "$STORE_BIN" --db "$WORK/store1" --listen 127.0.0.1:0 --store_index 0 --store_count 3 >"$WORK/wrong.log" 2>&1; then
  fail "store 1 started as store 0"
fi
grep -q "is store 1 of 3, not store 0 of 3" "$WORK/wrong.log" || fail "wrong index: $(cat "$WORK/wrong.log")"
check "a store will not start as another index"
echo "PASS"
