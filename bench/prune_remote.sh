#!/usr/bin/env bash
# `taso rules prune` where the stores run: one synthetic verified job
# (bench/prune_input: RULES random proved rules, up to 4 operators a side)
# pruned on two copies of its database, once with the database opened in the
# pruner's process (--db, the store stopped) and once over gRPC (--store, the
# store serving, as the taso-prune Job does in a cluster). Prints the wall
# time and peak RSS of each, the serving store's peak RSS, and checks that
# both leave the same reduction table.
#   bench/prune_remote.sh [RULES] [WORK_DIR]
set -euo pipefail
rules=${1:-500000}
work=${2:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { echo "prune_remote: $*" >&2; }
log "building -c opt"
bazel build -c opt //cli:taso //bin:taso_rules_db //bench:prune_input >"$work/build.log" 2>&1 ||
  { tail -20 "$work/build.log" >&2; exit 1; }
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
mkdir -p "$work/bin"
cp -f "$bin/cli/taso" "$bin/bin/taso_rules_db" "$bin/bench/prune_input" "$work/bin/"
if [[ ! -d "$work/input/store-0" ]]; then
  log "storing $rules random proved rules"
  "$work/bin/prune_input" --db "$work/input" --rules "$rules" >&2
fi
rm -rf "$work/local" "$work/remote"
cp -a "$work/input" "$work/local"
cp -a "$work/input" "$work/remote"

peak() { grep "Maximum resident" "$1" | awk '{printf "%d MiB", $NF / 1024}'; }
wall() { grep "Elapsed (wall" "$1" | awk '{print $NF}'; }

log "--db (in-process)"
/usr/bin/time -v "$work/bin/taso" rules prune --db "$work/local" --json >"$work/local.json" 2>"$work/local.time"

log "--store (over gRPC, the store serving)"
rm -f "$work/store.port"
"$work/bin/taso_rules_db" --db "$work/remote/store-0" --listen 127.0.0.1:0 --port_file "$work/store.port" \
  >"$work/store.log" 2>&1 &
store=$!
trap 'kill "$store" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [[ -s "$work/store.port" ]] && break; sleep 0.1; done
[[ -s "$work/store.port" ]] || { log "the store did not start: $(tail -3 "$work/store.log")"; exit 1; }
before=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$store/status")
/usr/bin/time -v "$work/bin/taso" rules prune --store "127.0.0.1:$(cat "$work/store.port")" --json \
  >"$work/remote.json" 2>"$work/remote.time"
store_peak=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$store/status")

field() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" "$1"; }
for f in proved after_renaming after_common_subgraph; do
  [[ "$(field "$work/local.json" "$f")" == "$(field "$work/remote.json" "$f")" ]] ||
    { log "$f differs: --db $(field "$work/local.json" "$f"), --store $(field "$work/remote.json" "$f")"; exit 1; }
done
echo "rules: $rules random proved rules (bench/prune_input), one store shard, $(nproc) cores"
echo "reduction (both): $(field "$work/local.json" proved) -> $(field "$work/local.json" after_renaming) -> $(field "$work/local.json" after_common_subgraph)"
echo "--db    wall $(wall "$work/local.time"), peak RSS $(peak "$work/local.time")"
echo "--store wall $(wall "$work/remote.time"), peak RSS $(peak "$work/remote.time") (pruner); store peak ${store_peak} MiB (${before} MiB before)"
