#!/usr/bin/env bash
# The candidate set does not depend on how the work is split: 1 generator
# shard, 4 generator shards, and 3 generator shards over 2 store shards give
# the same pairs (and the same counts), at size 2 of TASO's default spec.
source tests/generate/lib.sh

run() {  # run NAME ARGS...
  local name=$1; shift
  "$TASO" generate --max-ops 2 --db "$WORK/$name" --job "$name" --json "$@" >"$WORK/$name.json" \
    2>"$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
  dump "$WORK/$name" "$name" >"$WORK/$name.pairs"
}
run one --shards 1
run four --shards 4
run split --shards 3 --store-shards 2

[ -s "$WORK/one.pairs" ] || fail "no candidate pairs at all"
pairs=$(grep -c " pair " "$WORK/one.pairs")
check "shards=1: $pairs candidate pairs, $(grep -c " rejected " "$WORK/one.pairs" || true) rejected"
for other in four split; do
  diff -q "$WORK/one.pairs" "$WORK/$other.pairs" >/dev/null || {
    diff "$WORK/one.pairs" "$WORK/$other.pairs" | head -5
    fail "$other differs from one shard"
  }
  for field in graphs distinct_fingerprints multi_graph_classes candidate_classes candidate_pairs rejected_pairs; do
    a=$(json_field "$WORK/one.json" "$field"); b=$(json_field "$WORK/$other.json" "$field")
    [ "$a" = "$b" ] || fail "$field: $a with one shard, $b with $other"
  done
  check "$other: same $pairs pairs and counts as one shard"
done
# Store shards really split the fingerprints.
[ -d "$WORK/split/store-1" ] || fail "second store shard missing"
a=$("$STORE_BIN" dump --db "$WORK/split/store-0" --job split | wc -l)
b=$("$STORE_BIN" dump --db "$WORK/split/store-1" --job split | wc -l)
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "store shards hold $a and $b pairs; both should hold some"
check "store shards hold $a + $b pairs"
# Rerunning a finished job resumes it: nothing to do, same answer.
"$TASO" generate --max-ops 2 --db "$WORK/one" --job one --shards 1 --json >"$WORK/again.json" 2>/dev/null
[ "$(json_field "$WORK/again.json" candidate_pairs)" = "$(json_field "$WORK/one.json" candidate_pairs)" ] ||
  fail "rerun of a finished job changed its result"
check "rerun of a finished job returns the same result"
echo "PASS"
