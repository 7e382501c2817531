#!/usr/bin/env bash
# Two rule sets (size 3 against size 4, say) on the suite: bench/suite.sh once per rule file, on the
# same models with one shared cost cache (so both runs price an operator alike), then one table
# joining the two (bench/rules_compare.js): predicted and ORT-measured speedup, search time,
# rewrites available and e-nodes per model and search, and geometric means.
#   bench/rules_compare.sh A.pb B.pb [MODELS...]
#   environment: LABELS="size 3,size 4", WORK=DIR (default /tmp/taso-rules-compare), and bench/suite.sh's
#   SEARCHES, THREADS (default 1 here), TIME_LIMIT, BACKEND, TASO
set -euo pipefail
a=$(realpath "${1:?usage: bench/rules_compare.sh A.pb B.pb [MODELS...]}")
b=$(realpath "${2:?usage: bench/rules_compare.sh A.pb B.pb [MODELS...]}")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=${WORK:-${TMPDIR:-/tmp}/taso-rules-compare}
mkdir -p "$work/a" "$work/b" "$work/costs"
work=$(cd "$work" && pwd)
ln -sfn "$work/costs" "$work/a/costs"
ln -sfn "$work/costs" "$work/b/costs"
export THREADS=${THREADS:-1}
status=0
WORK="$work/a" RULES="$a" bench/suite.sh "$@" || status=1
# The second run reuses the first's models (and its taso, when it built one).
for f in "$work"/a/*.onnx; do [[ -e $f ]] && ln -sfn "$f" "$work/b/$(basename "$f")"; done
[[ -z "${TASO:-}" && -x "$work/a/bin/cli/taso" ]] && export TASO="$work/a/bin/cli/taso"
WORK="$work/b" RULES="$b" bench/suite.sh "$@" || status=1
node bench/rules_compare.js --a "$work/a/suite.json" --b "$work/b/suite.json" --labels "${LABELS:-A,B}" \
  --json "$work/compare.json" || status=1
echo "rules_compare: wrote $work/compare.json"
exit $status
