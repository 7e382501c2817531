#!/usr/bin/env bash
# A sampled size-5 run: generation and verification at sizes 3, 4 and 5 on a
# subset of the operator templates (bench/testdata/matmul_family_spec.textproto
# by default), printing per size the graphs, pairs, wall times and the
# reduction table, and the growth from one size to the next, the figures the
# the size-5 extrapolation (bench/results/README.md) scales the full spec's size-4 run by.
#   bench/size5_sample.sh [SPEC] [WORK_DIR]      (WORKERS=2 verifier processes)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:-$root/bench/testdata/matmul_family_spec.textproto}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
workers=${WORKERS:-2}
cd "$root"
bazel build -c opt //cli:taso //bin:taso_generator //bin:taso_rules_db //bin:taso_verifier >/dev/null 2>&1
taso="$root/bazel-bin/cli/taso"
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"; }
printf '%-4s %12s %12s %10s %9s %10s %9s %9s %9s\n' size graphs fingerprints pairs gen_s proved verify_s renaming common
for n in 3 4 5; do
  db="$work/size$n"
  "$taso" generate --spec "$spec" --max-ops "$n" --shards 2 --db "$db" --json >"$db.gen.json"
  "$taso" verify --db "$db" --workers "$workers" --json >"$db.verify.json"
  printf '%-4s %12s %12s %10s %9s %10s %9s %9s %9s\n' "$n" \
    "$(field graphs <"$db.gen.json")" "$(field distinct_fingerprints <"$db.gen.json")" \
    "$(field candidate_pairs <"$db.gen.json")" "$(field wall_seconds <"$db.gen.json")" \
    "$(field proved <"$db.verify.json")" "$(field wall_seconds <"$db.verify.json")" \
    "$(field after_renaming <"$db.verify.json")" "$(field after_common_subgraph <"$db.verify.json")"
done
echo "databases and JSON summaries in $work (disk: $(du -sh "$work" | cut -f1))"
