# Shared helpers for the integration tests (real processes on
# loopback). Sourced by each *_test.sh; runs from the Bazel runfiles root.
set -euo pipefail
TASO="$PWD/cli/taso"
STORE_BIN="$PWD/rules_db/taso_rules_db"
WORK="${TEST_TMPDIR:-$(mktemp -d)}/work"
rm -rf "$WORK" && mkdir -p "$WORK"

fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "ok: $*"; }

# dump DB_ROOT JOB: every candidate pair of the job over all store shards, sorted.
dump() {
  local root=$1 job=$2
  for d in "$root"/store-*/ "$root"/store/; do
    [ -d "$d" ] || continue
    "$STORE_BIN" dump --db "$d" --job "$job"
  done | sort
}

# start_store DIR [PORT]: starts a store, sets STORE_PID and STORE_PORT.
start_store() {
  local dir=$1 port=${2:-0}
  rm -f "$dir.port"
  "$STORE_BIN" --db "$dir" --listen "127.0.0.1:$port" --port_file "$dir.port" --write_buffer_mb 8 \
    >>"$dir.log" 2>&1 &
  STORE_PID=$!
  for _ in $(seq 1 300); do
    [ -s "$dir.port" ] && break
    sleep 0.1
  done
  [ -s "$dir.port" ] || fail "store did not start: $(tail -3 "$dir.log")"
  STORE_PORT=$(cat "$dir.port")
}

json_field() {  # json_field FILE NAME
  sed -n "s/.*\"$2\": \\([0-9.]*\\).*/\\1/p" "$1"
}
