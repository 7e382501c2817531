#!/usr/bin/env bash
# Runs every fuzz target (fuzz/BUILD.bazel) with libFuzzer, ASan and UBSan
# for SECONDS each, starting from its checked-in corpus (copied: what the run
# finds stays in WORK), and prints per target the executions, the corpus
# size before and after, and the crashes.
#   bench/fuzz_run.sh [SECONDS] [WORK] [TARGETS...]
# A crash's input is in WORK/TARGET/crashes/: copy it into fuzz/corpus/TARGET/
# once fixed, and its replay test keeps it fixed. Builds with clang in an
# output base of its own (first build ~10 min on 2 cores).
set -euo pipefail
seconds=${1:-60}
work=${2:-$(mktemp -d)}
shift $(( $# > 2 ? 2 : $# ))
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$work"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(egraph_json graph onnx_import packed_records rule_sexpr signature_text)
base="${TASO_FUZZ_OUTPUT_BASE:-$HOME/.cache/taso-fuzz-bazel}"
# --symlink_prefix=/: no bazel-bin links, which would point the workspace's at this output base.
bazel --output_base="$base" build --config=fuzz --symlink_prefix=/ //fuzz:all_fuzzers >"$work/build.log" 2>&1 ||
  { tail -20 "$work/build.log"; exit 1; }
bin="$(bazel --output_base="$base" info --config=fuzz bazel-bin 2>/dev/null)/fuzz"
printf '%-16s %12s %10s %10s %8s\n' target executions corpus_in corpus_out crashes
status=0
for t in "${targets[@]}"; do
  dir="$work/$t"
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/crashes"
  cp -r "fuzz/corpus/$t/." "$dir/corpus/"
  before=$(find "$dir/corpus" -type f | wc -l)
  rc=0
  "$bin/${t}_fuzzer" "$dir/corpus" -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 \
    -artifact_prefix="$dir/crashes/" >"$dir/log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  after=$(find "$dir/corpus" -type f | wc -l)
  crashes=$(find "$dir/crashes" -type f | wc -l)
  printf '%-16s %12s %10s %10s %8s\n' "$t" "${execs:-?}" "$before" "$after" "$crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    status=1
    grep -m3 -E "ERROR|fuzz check failed|SUMMARY" "$dir/log" | sed 's/^/    /' || true
  fi
done
echo "(work dir: $work)"
exit $status
