#!/usr/bin/env bash
# Axiom validation figures, -c opt: every axiom checked by symbolic execution
# on every well-typed instance with tensor dimensions up to MAX_DIM (default
# 3; kernel dimensions also 3), in every stratum (assignment of the axiom's
# integer parameters). PER_STRATUM 0 (default) checks every instance; a
# positive value caps each stratum at that many. Prints the table with
# per-parameter counts, then the total time.
#   bench/validate_axioms.sh [MAX_DIM] [PER_STRATUM] [THREADS]
set -euo pipefail
max_dim=${1:-3}
per_stratum=${2:-0}
threads=${3:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //bin:taso_verifier >/dev/null 2>&1
verifier="$root/bazel-bin/bin/taso_verifier"
echo "== taso_verifier axioms validate --max_dim $max_dim --max_instances_per_stratum $per_stratum" \
  "--threads $threads --by_param ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
start=$(date +%s)
status=0
"$verifier" axioms validate --max_dim "$max_dim" --max_instances_per_stratum "$per_stratum" \
  --threads "$threads" --by_param || status=$?
echo "total time: $(( $(date +%s) - start )) s (build excluded); exit status $status"
exit "$status"
