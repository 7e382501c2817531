#!/usr/bin/env bash
# Clear errors and resumable jobs: a bad spec file, an unreachable store, and
# a store that runs out of space (a file-size limit stands in for a full disk).
source tests/generate/lib.sh

printf 'inputs { name: "x" dims: [2, 4] }\nopertors { kind: OP_RELU }\n' >"$WORK/bad.spec"
set +e
"$TASO" generate --max-ops 2 --spec "$WORK/bad.spec" --db "$WORK/bad" >"$WORK/bad.out" 2>&1
code=$?
set -e
[ "$code" = 2 ] || fail "bad spec: exit $code, want 2"
grep -q "bad.spec: not a valid taso.generator.GenerationSpec: line 2" "$WORK/bad.out" ||
  fail "bad spec message: $(cat "$WORK/bad.out")"
check "bad spec: exit 2, $(head -1 "$WORK/bad.out")"

set +e
"$TASO" generate --max-ops 2 --store 127.0.0.1:1 --db "$WORK/unreachable" >"$WORK/unreachable.out" 2>&1
code=$?
set -e
[ "$code" = 3 ] || fail "unreachable store: exit $code, want 3: $(cat "$WORK/unreachable.out")"
grep -q "store 127.0.0.1:1 is unreachable" "$WORK/unreachable.out" || fail "message: $(cat "$WORK/unreachable.out")"
check "unreachable store: exit 3, $(head -1 "$WORK/unreachable.out")"

reference_pairs

# A store whose files may not grow past 256 KiB: writes fail with EFBIG. (The
# graphs' spool keeps a file per fingerprint bucket: about 1 MiB each at size 3.)
mkdir -p "$WORK/full"
(
  trap '' XFSZ
  ulimit -f 256
  exec "$STORE_BIN" --db "$WORK/full/store" --listen 127.0.0.1:0 --port_file "$WORK/full/store.port" \
    >"$WORK/full/store.log" 2>&1
) &
STORE_PID=$!
for _ in $(seq 1 300); do [ -s "$WORK/full/store.port" ] && break; sleep 0.1; done
port=$(cat "$WORK/full/store.port")
set +e
"$TASO" generate --max-ops 3 --shards 2 --store "127.0.0.1:$port" --db "$WORK/full" --job job >"$WORK/full.out" 2>&1
code=$?
set -e
[ "$code" = 1 ] || fail "full disk: exit $code, want 1: $(cat "$WORK/full.out")"
grep -q "disk is full" "$WORK/full.out" || fail "full disk message: $(cat "$WORK/full.out")"
check "full disk: exit 1, $(grep -m1 "disk is full" "$WORK/full.out")"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true

# Space is back: the same command resumes the job and completes it.
start_store "$WORK/full/store" "$port"
"$TASO" generate --max-ops 3 --shards 2 --store "127.0.0.1:$port" --db "$WORK/full" --job job --json \
  >"$WORK/resumed.json" 2>"$WORK/resumed.err" || fail "resume after full disk: $(cat "$WORK/resumed.err")"
kill "$STORE_PID"; wait "$STORE_PID" 2>/dev/null || true
same_pairs "$WORK/full" "resumed after the full disk"
check "resumed after the full disk: same $(wc -l <"$WORK/full.pairs") pairs as an undisturbed run"
echo "PASS"
