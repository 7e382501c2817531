#!/usr/bin/env bash
# The store (taso_rules_db) in the fault matrix, at size 3 of TASO's default
# spec with real generators streaming to it: SIGTERM mid-job and a restart,
# every connection reset mid-stream, and a disk that fills mid-job and is
# freed. After each, the job's candidate set equals an undisturbed run's:
# nothing acknowledged was lost and nothing was stored twice. (kill -9 of the
# store: tests/generate/generate_fault_test.sh.)
source tests/generate/lib.sh
source tests/faults/lib.sh

reference_pairs

# wait_stored LOG: until a shard has told the store of stored batches (the
# stream itself is logged when it ends).
wait_stored() {
  wait_for_line "$1" "ReportProgress OK" 600 || fail "no shard reported progress to the store: $(tail -3 "$1")"
}

# SIGTERM: the store drains and exits 0; generators retry until it is back.
mkdir -p "$WORK/term"
start_store "$WORK/term/store"
port=$STORE_PORT
"$TASO" generate --max-ops 3 --shards 2 --store "127.0.0.1:$port" --db "$WORK/term" --job job \
  >"$WORK/term.out" 2>&1 &
cli=$!
wait_stored "$WORK/term/store.log"
kill -TERM "$STORE_PID"
wait "$STORE_PID" || fail "the store exited $? on SIGTERM: $(tail -3 "$WORK/term/store.log")"
kill -0 "$cli" 2>/dev/null || fail "the job ended before the store was back: $(tail -3 "$WORK/term.out")"
check "SIGTERM mid-job: the store exited 0"
sleep 1
start_store "$WORK/term/store" "$port"
wait "$cli" || fail "the job failed across the store's restart: $(tail -5 "$WORK/term.out")"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
same_pairs "$WORK/term" "SIGTERM"
check "restarted on port $port: the job finished with the undisturbed run's pairs"

# Dropped connections: every connection to the store reset, three times.
mkdir -p "$WORK/drop"
start_store "$WORK/drop/store"
start_proxy store-proxy "127.0.0.1:$STORE_PORT"
"$TASO" generate --max-ops 3 --shards 2 --store "$PROXY_ADDR" --db "$WORK/drop" --job job \
  >"$WORK/drop.out" 2>&1 &
cli=$!
wait_stored "$WORK/drop/store.log"
dropped=0
for _ in 1 2 3; do
  kill -0 "$cli" 2>/dev/null || break
  dropped=$((dropped + $(drop_connections store-proxy "$PROXY_PID")))
  sleep 1
done
[ "$dropped" -gt 0 ] || fail "no connection was open to drop (the job finished too fast?)"
wait "$cli" || fail "the job failed after dropped connections: $(tail -5 "$WORK/drop.out")"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
same_pairs "$WORK/drop" "dropped connections"
check "$dropped connections reset mid-stream: the job finished with the undisturbed run's pairs"

# A full disk (ENOSPC) mid-job: the job stops with a clear error, the store
# stays up for reads, and after space is freed and the store restarted the
# same command finishes the job.
mkdir -p "$WORK/full"
FLAG="$WORK/disk-full"
start_store_with_full_disk "$WORK/full/store" "$FLAG"
port=$STORE_PORT
"$TASO" generate --max-ops 3 --shards 2 --store "127.0.0.1:$port" --db "$WORK/full" --job job \
  >"$WORK/full.out" 2>&1 &
cli=$!
wait_stored "$WORK/full/store.log"
touch "$FLAG"
set +e
wait "$cli"
code=$?
set -e
[ "$code" = 1 ] || fail "full disk: exit $code, want 1: $(tail -5 "$WORK/full.out")"
grep -q "disk is full" "$WORK/full.out" || fail "full disk message: $(tail -5 "$WORK/full.out")"
kill -0 "$STORE_PID" 2>/dev/null || fail "the store died on a full disk: $(tail -3 "$WORK/full/store.log")"
"$TASO" rules stats --store "127.0.0.1:$port" >"$WORK/full.stats" 2>&1 ||
  fail "the store with a full disk does not answer reads: $(cat "$WORK/full.stats")"
check "full disk: exit 1 ($(grep -m1 -o "disk is full[^;]*" "$WORK/full.out")); the store is up and reads work"
# A probe sees the stopped store (the health check is polled every second).
for _ in $(seq 1 10); do
  "$TASO" health "127.0.0.1:$port" >"$WORK/full.health" 2>&1 || break
  sleep 1
done
grep -q NOT_SERVING "$WORK/full.health" || fail "full disk: health $(cat "$WORK/full.health"), want NOT_SERVING"
grep -q "health NOT_SERVING: .*disk is full" "$WORK/full/store.log" ||
  fail "full disk: the store did not log why it is NOT_SERVING: $(tail -3 "$WORK/full/store.log")"
check "full disk: the health check says NOT_SERVING and the store's log says why"
rm -f "$FLAG"
kill -TERM "$STORE_PID"
wait "$STORE_PID" || fail "the store exited $? on SIGTERM after the full disk: $(tail -3 "$WORK/full/store.log")"
start_store "$WORK/full/store" "$port"
"$TASO" health "127.0.0.1:$port" >/dev/null || fail "after a restart with space: the store is not SERVING"
"$TASO" generate --max-ops 3 --shards 2 --store "127.0.0.1:$port" --db "$WORK/full" --job job \
  >"$WORK/resumed.out" 2>&1 || fail "resuming after the full disk: $(tail -5 "$WORK/resumed.out")"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
same_pairs "$WORK/full" "full disk"
check "space freed, store restarted: the job finished with the undisturbed run's pairs"
echo "PASS"
