#!/usr/bin/env bash
# Fault injection with real processes, at size 3 of TASO's default spec:
# kill -9 a generator mid-job (taso generate restarts it), kill -9 the store
# mid-job and restart it on the same port and database; the final candidate
# set must equal an undisturbed run's.
source tests/generate/lib.sh

reference_pairs

mkdir -p "$WORK/dist"
start_store "$WORK/dist/store"
port=$STORE_PORT
"$TASO" generate --max-ops 3 --shards 2 --store "127.0.0.1:$port" --db "$WORK/dist" --job job --json \
  --batch-records 20000 >"$WORK/dist.json" 2>"$WORK/dist.err" &
cli=$!

# Generator shard 1 of this test's `taso generate` (its child): only processes
# this test started are signalled, whatever else runs on the machine.
shard1() { pgrep -P "$cli" -f -- "--job=job --shard=1"; }

# Wait for both shards to have stored something, then kill shard 1.
wait_stored() {
  for _ in $(seq 1 600); do
    if [ -s "$WORK/dist/logs/generator-1.log" ] || shard1 >/dev/null; then
      sleep "$1"; return 0
    fi
    sleep 0.1
  done
  fail "generators never started: $(cat "$WORK/dist.err")"
}
wait_stored 3
pid=$(shard1) || fail "no generator shard 1 to kill (job finished too fast?)"
kill -9 $pid
check "killed generator shard 1 with SIGKILL"

sleep 3
kill -9 "$STORE_PID"
wait "$STORE_PID" 2>/dev/null || true
check "killed the store with SIGKILL"
sleep 2
start_store "$WORK/dist/store" "$port"
check "restarted the store on port $port"

wait "$cli" || fail "disturbed run failed: $(cat "$WORK/dist.err")"
grep -q "restarting it" "$WORK/dist.err" || fail "taso generate did not report restarting the killed shard"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
same_pairs "$WORK/dist" "after both kills"
for field in graphs distinct_fingerprints candidate_pairs rejected_pairs; do
  [ "$(json_field "$WORK/ref.json" "$field")" = "$(json_field "$WORK/dist.json" "$field")" ] ||
    fail "$field differs: $(json_field "$WORK/ref.json" "$field") vs $(json_field "$WORK/dist.json" "$field")"
done
check "after both kills: the same $(wc -l <"$WORK/dist.pairs") pairs and counts"
echo "PASS"
