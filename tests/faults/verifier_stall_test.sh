#!/usr/bin/env bash
# A verifier stalled inside a Z3 query, at size 3 of TASO's default spec. Z3
# does not check its limits everywhere, so a query can run for minutes past
# them; the verifier's watchdog then ends it (exit 75, the class and pair in
# its log), its leases expire, and after a class's lease expired
# --max_lease_expiries times the store gives the class up: its pairs are
# stored TIMEOUT with the reason, and the job still finishes. The stall is
# real: a stall limit of a microsecond, which every query passes.
source tests/generate/lib.sh
source tests/faults/lib.sh
VERIFIER_BIN="$PWD/bin/taso_verifier"

reference_job

STORE_FLAGS="--max_lease_expiries=2" start_store "$WORK/gen/store-0"
FAULT_PIDS+=("$STORE_PID")
store="127.0.0.1:$STORE_PORT"

# Twice: the verifier stalls on its first query and ends itself; its
# leases (the same classes both times: an expired class is first in line)
# expire after a second.
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
  sleep 1.5
done
check "a verifier stalled twice exited 75 with: $(grep -o "it had in hand lease [^.]*" "$WORK/stall2.log")"

# The rest, by verifiers that do not stall. The classes stalled on twice
# are given up when their leases expire the second time.
"$TASO" verify --store "$store" --db "$WORK/gen" --json >"$WORK/dist.json" 2>"$WORK/dist.err" ||
  fail "finishing the job: $(cat "$WORK/dist.err")"
given_up=$(json_field "$WORK/dist.json" classes_given_up)
[ "${given_up:-0}" -ge 1 ] || fail "no class given up: $(cat "$WORK/dist.json")"
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
echo "PASS"
