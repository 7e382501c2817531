#!/usr/bin/env bash
# The verifier in the fault matrix, at size 3 of TASO's default spec: one
# verification job disturbed in turn by every connection to the store reset
# mid-RPC, SIGTERM of a verifier, and the store's disk filling up under a
# verifier's report; then finished by `taso verify`. The rule set (every rule,
# status and the reduction table) equals an undisturbed run's. (kill -9 of a
# verifier: tests/verify/verify_fault_test.sh.)
source tests/generate/lib.sh
source tests/faults/lib.sh
VERIFIER_BIN="$PWD/bin/taso_verifier"

reference_job
mv "$WORK/gen" "$WORK/dist"

FLAG="$WORK/disk-full"
start_store_with_full_disk "$WORK/dist/store-0" "$FLAG"
port=$STORE_PORT
store="127.0.0.1:$port"
start_proxy store-proxy "$store"

# 1. Connections reset mid-RPC: the verifier retries and keeps going.
"$VERIFIER_BIN" --store "$PROXY_ADDR" --job job --threads 1 --lease_ms 3000 --worker_id a >"$WORK/a.log" 2>&1 &
a=$!
FAULT_PIDS+=("$a")
wait_progress "$store" 0
dropped=0
for _ in 1 2 3; do
  dropped=$((dropped + $(drop_connections store-proxy "$PROXY_PID")))
  sleep 0.5
done
[ "$dropped" -gt 0 ] || fail "no connection was open to drop"
before=$(classes_verified "$store")
wait_progress "$store" "$before"
kill -0 "$a" 2>/dev/null || fail "the verifier died on dropped connections: $(tail -3 "$WORK/a.log")"
check "$dropped connections reset: the verifier went on ($(classes_verified "$store") classes verified)"

# 2. SIGTERM: the verifier reports the class in hand and exits 0.
kill -TERM "$a"
wait "$a" || fail "the verifier exited $? on SIGTERM: $(tail -3 "$WORK/a.log")"
grep -q "stopped by a signal" "$WORK/a.log" || fail "no orderly stop: $(tail -3 "$WORK/a.log")"
check "SIGTERM: the verifier finished its class and exited 0"

# 3. The store's disk fills: a verifier's report fails with a clear error,
# the store stays up; space freed and the store restarted, nothing is lost.
touch "$FLAG"
set +e
timeout 120 "$VERIFIER_BIN" --store "$store" --job job --threads 1 --lease_ms 3000 --worker_id b >"$WORK/b.log" 2>&1
code=$?
set -e
[ "$code" = 1 ] || fail "verifier on a full store: exit $code, want 1: $(tail -3 "$WORK/b.log")"
grep -q "disk is full" "$WORK/b.log" || fail "no full-disk message: $(tail -3 "$WORK/b.log")"
kill -0 "$STORE_PID" 2>/dev/null || fail "the store died on a full disk: $(tail -3 "$WORK/dist/store-0.log")"
check "full disk: the verifier stopped with exit 1 ($(grep -m1 -o "disk is full" "$WORK/b.log")), the store is up"
rm -f "$FLAG"
kill -TERM "$STORE_PID"
wait "$STORE_PID" || fail "the store exited $? on SIGTERM after the full disk: $(tail -3 "$WORK/dist/store-0.log")"
start_store "$WORK/dist/store-0" "$port"

"$TASO" verify --store "$store" --db "$WORK/dist" --lease-ms 3000 --json >"$WORK/dist.json" 2>"$WORK/dist.err" ||
  fail "finishing the job: $(cat "$WORK/dist.err")"
same_rules "$store" "$WORK/dist.json" "after the faults"
check "after all three faults: the same $(wc -l <"$WORK/dist.rules") rules, statuses and reduction table"
echo "PASS"
