#!/usr/bin/env bash
# A verifier stalled inside a Z3 query, at size 3 of TASO's default spec. Z3
# does not check its limits everywhere, so a query can run for minutes past
# them; the verifier's watchdog then ends it (exit 75, the class and pair in
# its log), after reporting what it finished and releasing the leases of the
# classes it was not stuck on. Only the stuck class's lease expires, and
# after it expired --max_lease_expiries times the store gives that class up:
# its pairs are stored TIMEOUT with the reason, and the job still finishes.
# Verifiers stopped by SIGTERM release their unstarted leases too, so no
# other class is given up. The stall is real: a stall limit of a
# microsecond, which every query passes. And a thread held up by a slow
# class hands back the rest of its batch before those leases expire.
source tests/generate/lib.sh
source tests/faults/lib.sh
VERIFIER_BIN="$PWD/bin/taso_verifier"

reference_job
cp -r "$WORK/gen" "$WORK/slow"  # unverified, for the hand-back run below

STORE_FLAGS="--max_lease_expiries=2" start_store "$WORK/gen/store-0"
FAULT_PIDS+=("$STORE_PID")
store="127.0.0.1:$STORE_PORT"

# Twice: the verifier stalls on its first query and ends itself; the lease
# of the class it stalled on expires after a second (the same class both
# times: an expired class is first in line), the others it released.
for attempt in 1 2; do
  set +e
  timeout 120 "$VERIFIER_BIN" --store "$store" --job job --lease_ms 1000 --stall_s 0.000001 --worker_id "s$attempt" \
    >"$WORK/stall$attempt.log" 2>&1
  code=$?
  set -e
  [ "$code" = 75 ] || fail "stalled verifier $attempt: exit $code, want 75: $(tail -3 "$WORK/stall$attempt.log")"
  grep -q "past the 1us stall limit" "$WORK/stall$attempt.log" ||
    fail "no stall message: $(tail -3 "$WORK/stall$attempt.log")"
  grep -q "it had in hand lease job/[0-9a-f]*/[0-9]*, pair ([0-9]*, [0-9]*)" "$WORK/stall$attempt.log" ||
    fail "the stall message names no class: $(tail -3 "$WORK/stall$attempt.log")"
  grep -q "released [1-9][0-9]* leases of classes not stalled on" "$WORK/stall$attempt.log" ||
    fail "the stalled verifier released no lease: $(tail -3 "$WORK/stall$attempt.log")"
  sleep 1.5
done
check "a verifier stalled twice exited 75 with: $(grep -o "it had in hand lease [^.]*" "$WORK/stall2.log");" \
  "$(grep -o "released [0-9]* leases" "$WORK/stall2.log")"

# Verifiers stopped by SIGTERM while holding leases they have not started:
# they release them, so the classes are not counted as expired (counted,
# two such stops of the same classes would give them up). Up to eight tries
# for two stops that released something: a stop between batches has none.
stops=0
for try in $(seq 1 8); do
  before=$(classes_verified "$store" || echo 0)
  "$VERIFIER_BIN" --store "$store" --job job --lease_ms 1000 --worker_id "t$try" >"$WORK/term$try.log" 2>&1 &
  pid=$!
  FAULT_PIDS+=("$pid")
  wait_progress "$store" "${before:-0}"
  kill -TERM "$pid"
  wait "$pid" || fail "the verifier exited $? on SIGTERM: $(tail -3 "$WORK/term$try.log")"
  if grep -q "stopping: released [1-9][0-9]* of [0-9]* leases not started" "$WORK/term$try.log"; then
    stops=$((stops + 1))
    [ "$stops" = 2 ] && break
  fi
  sleep 1.5
done
[ "$stops" = 2 ] || fail "in 8 SIGTERMs, $stops verifiers held unstarted leases to release"
check "two verifiers stopped by SIGTERM $(grep -ho "released [0-9]* of [0-9]* leases not started" "$WORK"/term*.log | tr '\n' ';')"

# The rest, by verifiers that do not stall. The class stalled on twice is
# given up when its lease expires the second time, and no other.
"$TASO" verify --store "$store" --db "$WORK/gen" --json >"$WORK/dist.json" 2>"$WORK/dist.err" ||
  fail "finishing the job: $(cat "$WORK/dist.err")"
given_up=$(json_field "$WORK/dist.json" classes_given_up)
[ "${given_up:-0}" = 1 ] || fail "$given_up classes given up, want only the one stalled on: $(cat "$WORK/dist.json")"
grep -q "gave up class" "$WORK/gen/store-0.log" || fail "the store did not log the classes it gave up"
"$TASO" rules stats --store "$store" | grep -q "$given_up classes given up" ||
  fail "rules stats does not say: $("$TASO" rules stats --store "$store")"
check "$given_up classes given up; the job finished: $(json_field "$WORK/dist.json" proved) proved"

# Every rule is there; those that differ from the undisturbed run's are the
# given-up classes' pairs (and their renamings), not proved and saying why.
"$TASO" rules list --store "$store" --status "$ALL_RULE_STATUSES" >"$WORK/dist.rules"
[ "$(wc -l <"$WORK/dist.rules")" = "$(wc -l <"$WORK/ref.rules")" ] ||
  fail "$(wc -l <"$WORK/dist.rules") rules, the undisturbed run has $(wc -l <"$WORK/ref.rules")"
comm -13 <(sort "$WORK/ref.rules") <(sort "$WORK/dist.rules") >"$WORK/changed.rules"
[ -s "$WORK/changed.rules" ] || fail "no rule changed although $given_up classes were given up"
timeouts=0
while read -r id _; do
  "$TASO" rules show "$id" --store "$store" >"$WORK/one.rule"
  grep -qiE "^rule [^ ]+ +(timeout|rejected)" "$WORK/one.rule" ||
    fail "rule $id changed but is: $(head -2 "$WORK/one.rule")"
  grep -qiE "^rule [^ ]+ +timeout" "$WORK/one.rule" || continue
  timeouts=$((timeouts + 1))
  grep -q "gave the class up" "$WORK/one.rule" || fail "given-up rule $id does not say why: $(head -2 "$WORK/one.rule")"
done <"$WORK/changed.rules"
[ "$timeouts" -gt 0 ] || fail "no changed rule is timeout"
check "$(wc -l <"$WORK/changed.rules") rules differ from the undisturbed run, each timeout or rejected, saying why"

# Through `taso verify` alone, on a size-2 job: its --stall-s reaches the
# verifiers it starts (nearly every query stalls; the default, 5 minutes,
# stalls none here), it relaunches each one its watchdog ends, and its
# --max-lease-expiries reaches the local store, which gives each class up on
# its first expiry. The job still finishes. Some rules may still be proved:
# the watchdog looks every 5 ms, so a proof quicker than that gets through.
"$TASO" generate --max-ops 2 --shards 1 --db "$WORK/s2" --job small >/dev/null 2>"$WORK/s2.err" ||
  fail "size-2 generation: $(cat "$WORK/s2.err")"
timeout 300 "$TASO" verify --db "$WORK/s2" --stall-s 0.000001 --max-lease-expiries 1 --lease-ms 1000 \
  >"$WORK/s2.out" 2>"$WORK/s2.verify.err" || fail "taso verify with every query stalling: $(tail -3 "$WORK/s2.verify.err")"
relaunched=$(grep -c "stalled in a proof and was restarted" "$WORK/s2.verify.err" || true)
[ "$relaunched" -ge 1 ] || fail "no verifier was relaunched: $(tail -3 "$WORK/s2.verify.err")"
"$TASO" rules stats --db "$WORK/s2" >"$WORK/s2.stats"
grep -q "[1-9][0-9]* classes given up" "$WORK/s2.stats" || fail "no class given up: $(cat "$WORK/s2.stats")"
check "taso verify --stall-s --max-lease-expiries 1: $relaunched verifiers relaunched," \
  "$(grep -o "[0-9]* classes given up" "$WORK/s2.stats"), the job finished"
# A thread still busy with its batch of leases after --hand_back_ms (here
# 1 ms: every class is slow) releases the leases it has not started and
# reports what it finished, so other threads take them at once; none
# expires behind a slow class. With --max_lease_expiries=1 one expiry
# would give a class up. (Left to expire, such leases gave up 306 classes of
# this job with --lease_ms 1000 and eight threads renewing Z3 after every
# query, before the hand-back.)
STORE_FLAGS="--max_lease_expiries=1" start_store "$WORK/slow/store-0"
FAULT_PIDS+=("$STORE_PID")
slow="127.0.0.1:$STORE_PORT"
timeout 600 "$VERIFIER_BIN" --store "$slow" --job job --lease_ms 1000 --hand_back_ms 1 --threads 4 \
  --worker_id slow >"$WORK/slow.log" 2>&1 || fail "verifier handing back: exit $?: $(tail -3 "$WORK/slow.log")"
grep -q "still busy after 1ms: released [1-9][0-9]* of [0-9]* leases not started" "$WORK/slow.log" ||
  fail "no batch was handed back: $(tail -3 "$WORK/slow.log")"
if grep -q "expired before the report" "$WORK/slow.log"; then
  fail "a class was proved under a lease already handed back or expired: $(grep -m1 "expired before" "$WORK/slow.log")"
fi
"$TASO" rules stats --store "$slow" >"$WORK/slow.stats"
if grep -q "classes given up" "$WORK/slow.stats"; then fail "classes given up: $(cat "$WORK/slow.stats")"; fi
"$TASO" rules list --store "$slow" --status "$ALL_RULE_STATUSES" >"$WORK/slow.rules"
cmp -s <(sort "$WORK/ref.rules") <(sort "$WORK/slow.rules") ||
  fail "the rules differ from the undisturbed run's: $(diff <(sort "$WORK/ref.rules") <(sort "$WORK/slow.rules") | head -3)"
check "a verifier handing back every batch: $(grep -c "still busy" "$WORK/slow.log") hand-backs, no lease expired," \
  "the undisturbed run's $(wc -l <"$WORK/slow.rules") rules"
echo "PASS"
