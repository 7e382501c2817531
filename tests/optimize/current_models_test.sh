#!/usr/bin/env bash
# Models as current exporters write them (IR 7-10, opsets 13-21, the newer
# operator forms: make_current_corpus.py) through `taso optimize`. Each must be
# optimized and checked (exit 0: never a refusal with exit 2, a failed check
# with exit 4, or a crash), and its output must load in ONNX Runtime,
# keep the input's IR version and opset imports, and agree with the input there
# on the same random inputs (ort_compare.js). Every model is tried and reported
# before the test fails, so one run shows what works and what does not.
source tests/generate/lib.sh
command -v node >/dev/null || fail "node not found: ONNX Runtime runs in node (deploy/setup.sh expects node 20)"
# onnxruntime-node sits beside random_feeds.js in the source tree, not in the runfiles.
ORT_DIR=$(dirname "$(readlink -f profiler/ort/random_feeds.js)")
[[ -f $ORT_DIR/node_modules/onnxruntime-node/package.json ]] ||
  fail "onnxruntime-node is not installed in $ORT_DIR/node_modules: run deploy/setup.sh (npm ci in profiler/ort)"
/usr/bin/python3 -c "import onnx, torch, torchvision" ||
  fail "/usr/bin/python3 cannot import onnx, torch and torchvision: run deploy/setup.sh"

mkdir -p "$WORK/in" "$WORK/out"
/usr/bin/python3 tests/optimize/make_current_corpus.py "$WORK/in" >"$WORK/corpus.txt" 2>"$WORK/corpus.err" ||
  fail "making the corpus: $(tail -5 "$WORK/corpus.err")"
models=$(grep -c . "$WORK/corpus.txt")
[ "$models" -ge 30 ] || fail "the corpus has $models models: $(cat "$WORK/corpus.txt")"
corpus_field() { awk "{print \$$1}" "$WORK/corpus.txt" | sort -nu | tr '\n' ' '; }
check "corpus: $models models, IR versions $(corpus_field 3)and opsets $(corpus_field 5)"

# "IR VERSION domain:version ... / N nodes" of a model: the versions, which
# the output must keep, and its size, to show what the optimizer did.
describe() {
  /usr/bin/python3 -c 'import onnx, sys
m = onnx.load(sys.argv[1])
print("IR", m.ir_version, *sorted("%s:%d" % (o.domain or "ai.onnx", o.version) for o in m.opset_import), end=" / ")
print(len(m.graph.node), "nodes")' "$1"
}

# Short time limits: these models are small and the search ends well before;
# --export-baseline writes even an unimproved model through the exporter (the
# path that must keep the versions), --min-gain 0 keeps any predicted gain.
FLAGS=(--time-limit 5 --export-baseline --min-gain 0 -q)
# Exit 4 (the input returned because a check failed, the report saying why)
# fails too: every network of the corpus is one taso can check, in every form.
optimized=0 unchanged=0 refused=0 crashed=0 agree=0 failed=0
while read -r file _ <&3; do
  name=${file%.onnx}
  in="$WORK/in/$file" out="$WORK/out/$file" log="$WORK/out/$name.log"
  start=$(date +%s%N)
  code=0
  timeout 300 "$TASO" optimize "$in" -o "$out" "${FLAGS[@]}" >"$log" 2>&1 || code=$?
  seconds=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')
  verdict=""
  case $code in
    0 | 4 | 5)  # 5: optimized and checked, its measurement failed or skipped
      optimized=$((optimized + 1))
      before=$(describe "$in") after=$(describe "$out")
      if [ "${before% / *}" != "${after% / *}" ]; then
        verdict="FAIL: the versions ${before% / *} became ${after% / *}"
      elif ! node tests/optimize/ort_compare.js --ort "$ORT_DIR" "$in" "$out" >"$WORK/out/$name.ort" 2>&1; then
        verdict="FAIL: ONNX Runtime: $(grep -v "runs in ONNX Runtime\|: agree$" "$WORK/out/$name.ort" | head -3 | tr '\n' ' ')"
      else
        agree=$((agree + 1))
        verdict="${before#* / } -> ${after#* / }, agree in ONNX Runtime"
        verdict+=" (max $(grep -o "relative [0-9.e+-]*" "$WORK/out/$name.ort" | sort -k2 -g | tail -1))"
      fi
      if [ $code -eq 4 ]; then
        unchanged=$((unchanged + 1))
        verdict="FAIL: returned unchanged: $(grep -m1 -o "NOT OPTIMIZED: .*" "$log" | cut -c1-200); $verdict"
      fi
      ;;
    2)
      refused=$((refused + 1))
      verdict="FAIL: refused (exit 2): $(grep -m1 "taso optimize: " "$log" | cut -c1-200)"
      ;;
    *)
      crashed=$((crashed + 1))
      how=""
      [ $code -eq 124 ] && how=" (timed out)"
      [ $code -gt 128 ] && how=" (signal $((code - 128)))"
      verdict="FAIL: exit $code$how: $(tail -2 "$log" | cut -c1-200 | tr '\n' ' ')"
      ;;
  esac
  [[ $verdict == FAIL:* ]] && failed=$((failed + 1))
  printf '%-38s exit %d %6s s  %s\n' "$file" "$code" "$seconds" "$verdict"
done 3<"$WORK/corpus.txt"
echo "current models: $optimized optimized ($unchanged of them returned unchanged), $refused refused, $crashed crashed," \
  "$agree agree in ONNX Runtime"
[ "$failed" -eq 0 ] || fail "$failed of $models current models failed (the lines with FAIL above)"
echo PASS
