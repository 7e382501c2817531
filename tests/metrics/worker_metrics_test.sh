#!/usr/bin/env bash
# taso_verifier is a client, not a server: with --metrics_listen it serves its
# progress on /metrics. Generate a size-2 job, verify it with one worker, and
# scrape until the classes it checked and the rules it proved show up. The
# store, started with --metrics_listen too, counts the verifier's calls.
source tests/generate/lib.sh
source tests/metrics/lib.sh
VERIFIER_BIN="$PWD/bin/taso_verifier"

"$TASO" generate --max-ops 2 --db "$WORK/gen" --job job --json >"$WORK/gen.json" 2>"$WORK/gen.err" ||
  fail "generation: $(cat "$WORK/gen.err")"
STORE="$WORK/gen/store-0"
rm -f "$STORE.port"  # `taso generate` may leave its embedded store's
"$STORE_BIN" --db "$STORE" --listen 127.0.0.1:0 --port_file "$STORE.port" --metrics_listen 127.0.0.1:0 \
  >"$STORE.log" 2>&1 &
STORE_PID=$!
for _ in $(seq 1 300); do [ -s "$STORE.port" ] && break; sleep 0.1; done
[ -s "$STORE.port" ] || fail "store did not start: $(tail -3 "$STORE.log")"
STORE_PORT=$(cat "$STORE.port")
"$VERIFIER_BIN" --store "127.0.0.1:$STORE_PORT" --job job --threads 1 --wait --metrics_listen 127.0.0.1:0 \
  >"$WORK/verifier.log" 2>&1 &
VERIFIER_PID=$!
trap 'kill -9 "$VERIFIER_PID" "$STORE_PID" 2>/dev/null || true' EXIT
PORT=$(metrics_port taso_verifier "$WORK/verifier.log")
[ -n "$PORT" ] || fail "the verifier did not say where metrics are: $(cat "$WORK/verifier.log")"

for _ in $(seq 1 600); do
  scrape "$PORT" >"$WORK/scrape.txt"
  # Proofs count as they finish, classes once the store took their report: wait for both.
  grep -Eq '^taso_verifier_proved_total [1-9]' "$WORK/scrape.txt" &&
    grep -Eq '^taso_verifier_classes_total [1-9]' "$WORK/scrape.txt" && break
  kill -0 "$VERIFIER_PID" 2>/dev/null || fail "the verifier exited: $(tail -5 "$WORK/verifier.log"); store: $(tail -5 "$STORE.log")"
  sleep 0.1
done
grep -q "^200 text/plain; version=0.0.4" "$WORK/scrape.txt" || fail "scrape: $(head -3 "$WORK/scrape.txt")"
grep -Eq '^taso_verifier_proved_total [1-9]' "$WORK/scrape.txt" || fail "nothing proved: $(cat "$WORK/scrape.txt")"
grep -Eq '^taso_verifier_classes_total [1-9]' "$WORK/scrape.txt" || fail "no classes counted: $(cat "$WORK/scrape.txt")"
grep -q '^# TYPE taso_verifier_unknown_total counter$' "$WORK/scrape.txt" || fail "unknown counter missing"
check "verifier status: $(grep -E '^taso_verifier_(classes|proved)_total' "$WORK/scrape.txt" | tr '\n' ' ')"
[ "$(scrape "$PORT" status | head -1)" = 404 ] || fail "GET /status is not 404"
STORE_METRICS=$(metrics_port taso_rules_db "$STORE.log")
[ -n "$STORE_METRICS" ] || fail "the store did not say where metrics are: $(cat "$STORE.log")"
scrape "$STORE_METRICS" >"$WORK/store.txt"
grep -Eq '^taso_rpc_requests_total\{method="/[a-z._]+\.RuleDb/[A-Za-z]+",code="OK"\} [1-9]' "$WORK/store.txt" ||
  fail "the store did not count the verifier's calls: $(head -1 "$WORK/store.txt"; grep rpc_requests "$WORK/store.txt")"
grep -q '^# TYPE taso_store_batches_total counter$' "$WORK/store.txt" || fail "store batch counter missing"
check "store: the verifier's calls counted by method and code"
echo PASS
