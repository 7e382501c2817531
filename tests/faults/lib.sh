# Fault injection for the fault-matrix tests (after tests/generate/lib.sh):
# a proxy whose connections can be dropped mid-RPC, and a disk that can be
# made full under a running process. Both are real: the proxy forwards real
# TCP between real processes, and the full disk is ENOSPC from write(2).
PROXY_PY="$PWD/tests/faults/tcp_proxy.py"
FULL_DISK_SO="$PWD/tests/faults/libfull_disk.so"
# Under ASan the preloaded library comes before the runtime; that is fine here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
FAULT_PIDS=()
trap 'for p in "${FAULT_PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done' EXIT

# start_proxy NAME HOST:PORT: a proxy to HOST:PORT; sets PROXY_ADDR and PROXY_PID.
start_proxy() {
  local name=$1 to=$2
  rm -f "$WORK/$name.port"
  /usr/bin/python3 "$PROXY_PY" --to "$to" --port-file "$WORK/$name.port" --log "$WORK/$name.log" &
  PROXY_PID=$!
  FAULT_PIDS+=("$PROXY_PID")
  for _ in $(seq 1 100); do [ -s "$WORK/$name.port" ] && break; sleep 0.1; done
  [ -s "$WORK/$name.port" ] || fail "proxy $name did not start: $(cat "$WORK/$name.log" 2>/dev/null)"
  PROXY_ADDR="127.0.0.1:$(cat "$WORK/$name.port")"
}

# drop_connections NAME PID: resets every connection through the proxy;
# prints how many were open.
drop_connections() {
  local name=$1 pid=$2 before
  before=$(grep -c "^dropped" "$WORK/$name.log" || true)
  kill -USR1 "$pid"
  for _ in $(seq 1 50); do
    [ "$(grep -c "^dropped" "$WORK/$name.log" || true)" -gt "$before" ] && break
    sleep 0.1
  done
  grep "^dropped" "$WORK/$name.log" | tail -1 | cut -d' ' -f2
}

# full_disk_env DIR FLAG: the environment under which a process finds the
# disk under DIR full while the file FLAG exists.
full_disk_env() {
  echo "LD_PRELOAD=$FULL_DISK_SO TASO_FULL_DISK_DIR=$1 TASO_FULL_DISK_FLAG=$2"
}

# start_store_with_full_disk DIR FLAG: start_store DIR, its disk full while
# the file FLAG exists.
start_store_with_full_disk() {
  STORE_ENV="$(full_disk_env "$1" "$2")" start_store "$1"
  FAULT_PIDS+=("$STORE_PID")
}

# wait_for_line FILE PATTERN [TENTHS]: waits until FILE has a line matching PATTERN.
wait_for_line() {
  local file=$1 pattern=$2 tenths=${3:-300}
  for _ in $(seq 1 "$tenths"); do
    grep -q -- "$pattern" "$file" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# classes_verified ADDR: how many classes of the job have verdicts.
classes_verified() {
  "$TASO" rules stats --store "$1" 2>/dev/null | sed -n 's/.* \([0-9]*\) \/ [0-9]* classes verified.*/\1/p' | head -1
}
# wait_progress ADDR ABOVE: until more than ABOVE classes are verified.
wait_progress() {
  for _ in $(seq 1 300); do
    [ "$(classes_verified "$1" || echo 0)" -gt "$2" ] 2>/dev/null && return 0
    sleep 0.2
  done
  fail "no verification progress past $2 classes"
}

# reference_job: a size-3 job ("job") of TASO's default spec generated in
# $WORK/gen, and a copy of it verified undisturbed in $WORK/ref: its --json
# report in $WORK/ref.json, every rule in $WORK/ref.rules (what a disturbed
# run is compared with).
reference_job() {
  "$TASO" generate --max-ops 3 --shards 2 --db "$WORK/gen" --job job >/dev/null 2>"$WORK/gen.err" ||
    fail "generation: $(cat "$WORK/gen.err")"
  cp -r "$WORK/gen" "$WORK/ref"
  "$TASO" verify --db "$WORK/ref" --json >"$WORK/ref.json" 2>"$WORK/ref.err" ||
    fail "reference verify: $(cat "$WORK/ref.err")"
  "$TASO" rules list --db "$WORK/ref" --status "$ALL_RULE_STATUSES" >"$WORK/ref.rules" ||
    fail "listing the reference rules"
  check "undisturbed: $(json_field "$WORK/ref.json" proved) proved, $(wc -l <"$WORK/ref.rules") rules"
}
