#!/usr/bin/env bash
# What ONNX Runtime's fused contrib kernels gain on the suite's transformer layer, measured against the
# layer as ORT runs it (level all: its own rewrites already make Gemm, FusedMatMul with the head
# transposes and the scale folded in, and Gelu). For each sequence length the layer
# (models/build_structures.py transformer_layer --seq S) and its attention block alone are rewritten by
# hand (bench/ort/fused_variants.py) into MultiHeadAttention, Attention, SkipLayerNormalization and all
# of them together, and bench/ort/speedup.js times each against the layer at each thread count (passes
# alternating creation order, one session alive at a time above 1 thread, the A/A control in the same
# run, outputs checked). bench/ort/node_profile.js then shows where the time goes in the layer and in
# its fully fused form at the largest sequence and thread count.
#   bench/fused_kernels.sh
#   environment:
#     SEQS="128 512"   sequence lengths (hidden 768, 12 heads, FFN 3072, batch 1)
#     THREADS="1 2"    ORT intraOpNumThreads
#     PASSES=4 MIN_RUNS=20 MIN_SECONDS=2   speedup.js timing per pass
#     WORK=DIR         models, JSON and profiles (default: a new temp dir)
# Prints one line per (model, threads): the A/A control and each variant's speedup with its passes.
# Exit 0 when every variant's outputs matched the layer's, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
source bench/bench_env.sh
bench_ort_deps
read -r -a seqs <<<"${SEQS:-128 512}"
read -r -a threads <<<"${THREADS:-1 2}"
timing=(--passes "${PASSES:-4}" --min-runs "${MIN_RUNS:-20}" --min-seconds "${MIN_SECONDS:-2}")
python=/usr/bin/python3
bench_log "work dir $work; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cpus"

summarize() {  # JSON from speedup.js -> one line
  node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const f = (x) => x.speedup.toFixed(3) + "x (" + x.ratios.map((r) => r.toFixed(2)).join(" ") + ")";
const bad = d.checks.filter((c) => !c.ok).map((c) => c.label);
const base = d.candidates.length ? d.candidates[0].orders[0].base.median_ms : NaN;
console.log(`${process.argv[2].padEnd(12)} ${String(d.threads).padStart(2)}t  base ${base.toFixed(1).padStart(6)} ms  A/A ` +
            `${d.control.speedup.toFixed(3)}x  ` + d.candidates.map((c) => c.label + " " + f(c)).join("  ") +
            (bad.length ? "  OUTPUTS DIFFER: " + bad.join(",") : ""));
process.exit(bad.length ? 1 : 0);' "$1" "$2"
}

rc=0
for s in "${seqs[@]}"; do
  layer="$work/transformer_layer_s$s.onnx"
  [[ -f $layer ]] || $python models/build_structures.py transformer_layer "$layer" --seq "$s" >/dev/null
  for shape in layer block; do
    dir="$work/s$s-$shape"
    mkdir -p "$dir"
    $python bench/ort/fused_variants.py "$layer" "$dir" $([[ $shape == block ]] && echo --block) >/dev/null
    candidates=()
    for v in mha attention skip_layer_norm fused; do
      [[ -f $dir/$v.onnx ]] && candidates+=("$v=$dir/$v.onnx")
    done
    for t in "${threads[@]}"; do
      out="$dir/speedup-${t}t.json"
      (cd bench/ort && node speedup.js --threads "$t" "${timing[@]}" "$dir/base.onnx" "${candidates[@]}" >"$out") || true
      summarize "$out" "s$s $shape" || rc=1
    done
  done
done

last_seq=${seqs[-1]}
last_threads=${threads[-1]}
for v in base fused; do
  model="$work/s$last_seq-layer/$v.onnx"
  (cd bench/ort && node node_profile.js --threads "$last_threads" "$model") | tee "$work/profile-s$last_seq-$v-${last_threads}t.txt" |
    sed -n '1p;/by operator type/,$p'
done
exit $rc
