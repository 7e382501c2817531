#!/usr/bin/env bash
# End-to-end verification figures: generates the job if needed (default spec,
# size MAX_OPS, 2 shards), then `taso verify` on a fresh copy of its database
# with WORKERS verifier processes, and prints the summary (proved fraction,
# reduction table, wall time). VERIFY_FLAGS are added to `taso verify`
# (e.g. --prove_once_per_form=false, which proves every pair).
#   bench/verify_run.sh MAX_OPS [WORKERS] [DB_DIR]
set -euo pipefail
max_ops=${1:?usage: bench/verify_run.sh MAX_OPS [WORKERS] [DB_DIR]}
workers=${2:-2}
db=${3:-$(mktemp -d)/db}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso >/dev/null 2>&1
taso="$root/bazel-bin/cli/taso"
if [[ ! -d "$db/gen/store-0" ]]; then
  "$taso" generate --max-ops "$max_ops" --shards 2 --db "$db/gen" --json >/dev/null
fi
rm -rf "$db/verify" && mkdir -p "$db/verify" && cp -r "$db/gen/store-0" "$db/verify/"
# shellcheck disable=SC2086  # VERIFY_FLAGS is a list of flags
"$taso" verify --db "$db/verify" --workers "$workers" ${VERIFY_FLAGS:-}
