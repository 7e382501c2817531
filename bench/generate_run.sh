#!/usr/bin/env bash
# End-to-end generation figures: wall time, peak RSS of every process, disk.
#   bench/generate_run.sh MAX_OPS SHARDS [DB_DIR]
# Runs `taso generate` (local store + SHARDS generator processes), samples the
# resident memory of each process every 2 s, and prints a summary.
set -euo pipefail
max_ops=${1:?usage: bench/generate_run.sh MAX_OPS SHARDS [DB_DIR]}
shards=${2:?usage: bench/generate_run.sh MAX_OPS SHARDS [DB_DIR]}
db=${3:-$(mktemp -d)/db}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso >/dev/null 2>&1
taso="$root/bazel-bin/cli/taso"
rss_log=$(mktemp)
"$taso" generate --max-ops "$max_ops" --shards "$shards" --db "$db" --json >"$rss_log.json" 2>"$rss_log.err" &
main=$!
peak_store=0; peak_gen=0; peak_cli=0
while kill -0 "$main" 2>/dev/null; do
  while read -r rss cmd; do
    case "$cmd" in
      *taso_rules_db*) (( rss > peak_store )) && peak_store=$rss ;;
      *taso_generator*) (( rss > peak_gen )) && peak_gen=$rss ;;
      *"cli/taso generate"*) (( rss > peak_cli )) && peak_cli=$rss ;;
    esac
  done < <(ps -eo rss=,args= | grep -E "taso_rules_db|taso_generator|cli/taso generate" | grep -v grep || true)
  sleep 2
done
wait "$main" || { echo "taso generate failed:"; cat "$rss_log.err"; exit 1; }
echo "summary: $(cat "$rss_log.json")"
echo "peak RSS: store $((peak_store / 1024)) MiB, generator (max over shards) $((peak_gen / 1024)) MiB, taso CLI $((peak_cli / 1024)) MiB"
echo "disk used: $(du -sh "$db" | cut -f1) in $db"
grep -h "finalized" "$db"/logs/store-*.log || true
