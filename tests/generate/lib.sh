# Shared helpers for the integration tests (real processes on
# loopback). Sourced by each *_test.sh; runs from the Bazel runfiles root.
set -euo pipefail
TASO="$PWD/cli/taso"
STORE_BIN="$PWD/bin/taso_rules_db"
WORK="${TEST_TMPDIR:-$(mktemp -d)}/work"
rm -rf "$WORK" && mkdir -p "$WORK"

fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "ok: $*"; }

# start_optimizer FLAGS...: a taso_optimizer on loopback with FLAGS, its log
# in $WORK/optimizer.log; sets OPT_PID and OPT_ADDR.
start_optimizer() {
  rm -f "$WORK/opt.port"
  "$PWD/bin/taso_optimizer" --listen 127.0.0.1:0 --port_file "$WORK/opt.port" "$@" >"$WORK/optimizer.log" 2>&1 &
  OPT_PID=$!
  for _ in $(seq 1 100); do [ -s "$WORK/opt.port" ] && break; sleep 0.1; done
  [ -s "$WORK/opt.port" ] || fail "taso_optimizer did not start: $(cat "$WORK/optimizer.log")"
  OPT_ADDR="127.0.0.1:$(cat "$WORK/opt.port")"
}

# optimize_checked ARGS...: `taso optimize ARGS`, where exit 5 (written and
# checked, but not measured: analytic costs, --no-measure) also counts as
# success; for the tests that are not about the never-slower step.
optimize_checked() {
  local rc=0
  "$TASO" optimize "$@" || rc=$?
  [ "$rc" -eq 5 ] && return 0
  return "$rc"
}

# dump DB_ROOT JOB: every candidate pair of the job over all store shards, sorted.
dump() {
  local root=$1 job=$2
  for d in "$root"/store-*/ "$root"/store/; do
    [ -d "$d" ] || continue
    "$STORE_BIN" dump --db "$d" --job "$job"
  done | sort
}

# start_store DIR [PORT]: starts a store, sets STORE_PID and STORE_PORT.
# STORE_ENV, if set, is environment (NAME=VALUE ...) for the store alone;
# STORE_FLAGS, more flags for it.
start_store() {
  local dir=$1 port=${2:-0}
  rm -f "$dir.port"
  env ${STORE_ENV:-} "$STORE_BIN" --db "$dir" --listen "127.0.0.1:$port" --port_file "$dir.port" --write_buffer_mb 8 \
    ${STORE_FLAGS:-} \
    >>"$dir.log" 2>&1 &
  STORE_PID=$!
  for _ in $(seq 1 300); do
    [ -s "$dir.port" ] && break
    sleep 0.1
  done
  [ -s "$dir.port" ] || fail "store did not start: $(tail -3 "$dir.log")"
  STORE_PORT=$(cat "$dir.port")
}

# reference_pairs: an undisturbed size-3 job of TASO's default spec in
# $WORK/ref, its --json report in $WORK/ref.json and its candidate pairs in
# $WORK/ref.pairs (what a disturbed run must end with).
reference_pairs() {
  "$TASO" generate --max-ops 3 --shards 2 --db "$WORK/ref" --job job --json >"$WORK/ref.json" 2>"$WORK/ref.err" ||
    fail "reference run: $(cat "$WORK/ref.err")"
  dump "$WORK/ref" job >"$WORK/ref.pairs"
  [ -s "$WORK/ref.pairs" ] || fail "reference run found no pairs"
  check "undisturbed: $(wc -l <"$WORK/ref.pairs") pairs"
}

# same_pairs DB_ROOT WHAT: the job's pairs under DB_ROOT equal the reference's.
same_pairs() {
  dump "$1" job >"$1.pairs"
  diff -q "$WORK/ref.pairs" "$1.pairs" >/dev/null || {
    diff "$WORK/ref.pairs" "$1.pairs" | head -5
    fail "$2: the candidate set differs from the undisturbed run"
  }
}

# Every status a rule can have (taso rules list --status).
ALL_RULE_STATUSES=proved,pruned,unknown,timeout,refuted,rejected_precheck

# same_rules STORE DIST_JSON WHAT: every rule the store at STORE holds (with
# its status) and the reduction table in DIST_JSON (taso verify --json) equal
# the undisturbed run's ($WORK/ref.rules, $WORK/ref.json).
same_rules() {
  "$TASO" rules list --store "$1" --status "$ALL_RULE_STATUSES" >"$WORK/dist.rules" || fail "listing the rules"
  diff -q "$WORK/ref.rules" "$WORK/dist.rules" >/dev/null || {
    diff "$WORK/ref.rules" "$WORK/dist.rules" | head -5
    fail "$3: the rule set differs from the undisturbed run"
  }
  local field
  for field in proved unknown rejected_precheck after_renaming after_common_subgraph; do
    [ "$(json_field "$WORK/ref.json" "$field")" = "$(json_field "$2" "$field")" ] ||
      fail "$3: $field differs: $(json_field "$WORK/ref.json" "$field") vs $(json_field "$2" "$field")"
  done
}

json_field() {  # json_field FILE NAME
  sed -n "s/.*\"$2\": \\([0-9.]*\\).*/\\1/p" "$1"
}
