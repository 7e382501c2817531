#!/usr/bin/env bash
# `taso optimize` as a user meets it: per-command help (exit 0), a foreign
# flag, an unknown flag and a bad value refused with exit 2 naming the flag,
# the proved built-in rules used with no other flag (the report's digest is
# the built-in set's, not the empty set's), --json with numbers and an error
# object on failure, and progress lines on stderr at least every 5 s during a
# search on a real model (the suite's unrolled LSTM cell), none with -q.
source tests/generate/lib.sh
EMPTY_DIGEST=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
mkdir -p "$WORK/models"
/usr/bin/python3 tests/optimize/make_models.py "$WORK/models" || fail "making test models (needs python3-onnx)"
MODEL="$WORK/models/convrelu.onnx"

# --- help
for asked in "optimize --help" "optimize -h" "help optimize"; do
  # shellcheck disable=SC2086
  "$TASO" $asked >"$WORK/help.out" 2>&1 || fail "taso $asked exited $?: $(cat "$WORK/help.out")"
  grep -q "^usage: taso optimize IN.onnx -o OUT.onnx" "$WORK/help.out" || fail "taso $asked: $(cat "$WORK/help.out")"
  grep -q -- "--time-limit=X  (default: 60)" "$WORK/help.out" || fail "taso $asked lists no --time-limit default"
  if grep -q -- "--instances" "$WORK/help.out"; then fail "taso $asked lists another command's flag"; fi
done
"$TASO" --help >"$WORK/top.out" 2>&1 || fail "taso --help exited $?"
grep -q "optimize" "$WORK/top.out" && grep -q "rules fuzz" "$WORK/top.out" || fail "taso --help: $(cat "$WORK/top.out")"
"$TASO" rules fuzz --help >"$WORK/fuzz.out" 2>&1 || fail "taso rules fuzz --help exited $?"
grep -q -- "--instances=N" "$WORK/fuzz.out" || fail "taso rules fuzz --help: $(cat "$WORK/fuzz.out")"
check "taso optimize --help, -h, help optimize and taso --help exit 0; each lists its own flags with defaults"

# The servers keep absl's flags, with the same promises: --help and --version exit 0, a bad flag exits 2.
for server in bin/taso_optimizer bin/taso_rules_db bin/taso_profiler bin/taso_verifier \
  bin/taso_generator; do
  "$server" --help >"$WORK/server.out" 2>&1 || fail "$server --help exited $?"
  grep -q -- "--listen\|--store" "$WORK/server.out" || fail "$server --help lists no flags: $(head -5 "$WORK/server.out")"
  "$server" --version >"$WORK/server.out" 2>&1 || fail "$server --version exited $?"
  grep -q "^taso_[a-z_]* [0-9]" "$WORK/server.out" || fail "$server --version: $(cat "$WORK/server.out")"
  set +e
  "$server" --bogus >"$WORK/server.out" 2>&1; code=$?
  set -e
  [ $code -eq 2 ] && grep -q "unknown flag --bogus" "$WORK/server.out" || fail "$server --bogus: exit $code"
done
check "the five servers: --help and --version exit 0, --bogus exits 2 naming it"

# --- refusals: exit 2, the flag named, the usage line, and nothing written
refused() {  # WHAT EXPECTED-TEXT ARGS...
  local what=$1 expected=$2 code
  shift 2
  set +e
  optimize_checked "$MODEL" -o "$WORK/refused.onnx" "$@" >"$WORK/refused.out" 2>&1
  code=$?
  set -e
  [ $code -eq 2 ] || fail "$what: exit $code, $(cat "$WORK/refused.out")"
  grep -qF -- "$expected" "$WORK/refused.out" || fail "$what: no '$expected' in $(cat "$WORK/refused.out")"
  grep -q "usage: taso optimize" "$WORK/refused.out" || fail "$what: no usage line: $(cat "$WORK/refused.out")"
  [ ! -e "$WORK/refused.onnx" ] || fail "$what: wrote a model"
}
refused "a fuzz flag" "--instances is not a flag of \`taso optimize\`" --instances 5
refused "an unknown flag" "unknown flag --bogus" --bogus
refused "a bad value" "--time-limit: 'abc' is not a number" --time-limit abc
refused "a missing value" "--search needs a value" --search
check "a foreign flag, an unknown flag, a bad value and a missing value: exit 2 naming the flag, with the usage"

# --- the built-in rules by default, and --rules none
optimize_checked "$MODEL" -o "$WORK/out.onnx" --time-limit 5 --json -q >"$WORK/out.json" 2>"$WORK/out.err" ||
  fail "optimize with defaults: $(cat "$WORK/out.err")"
json() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
[ "$(json "$WORK/out.json" "d['rules_origin']")" = RULES_BUILT_IN ] || fail "rules_origin: $(cat "$WORK/out.json")"
digest=$(json "$WORK/out.json" "d['rules_digest']")
[ ${#digest} -eq 64 ] && [ "$digest" != "$EMPTY_DIGEST" ] || fail "rules digest '$digest'"
[ "$(json "$WORK/out.json" "d['rules_proved']")" -gt 1000 ] || fail "rules_proved: $(cat "$WORK/out.json")"
[ "$(json "$WORK/out.json" "d['rules_available'] > 50")" = True ] || fail "few rewrites: $(cat "$WORK/out.json")"
# A model kept inline is one file each way, digested as sha256sum does.
[ "$(json "$WORK/out.json" "d['output_files']")" = \
  "[{'file': '$WORK/out.onnx', 'sha256': '$(sha256sum "$WORK/out.onnx" | cut -d' ' -f1)'}]" ] &&
  [ "$(json "$WORK/out.json" "d['input_files'][0]['sha256'] == d['input_sha256'] and len(d['input_files'])")" = 1 ] ||
  fail "the files' digests: $(cat "$WORK/out.json")"
optimize_checked "$MODEL" -o "$WORK/out.onnx" --time-limit 5 -q >"$WORK/out.txt" 2>&1 || fail "text report"
grep -q "^rules: built-in size-3 set, [0-9]* proved rules, sha256 ${digest:0:16}" "$WORK/out.txt" ||
  fail "the text report does not say where the rules came from: $(cat "$WORK/out.txt")"
optimize_checked "$MODEL" -o "$WORK/none.onnx" --time-limit 5 --rules none --json -q >"$WORK/none.json" 2>/dev/null ||
  fail "--rules none"
[ "$(json "$WORK/none.json" "d['rules_origin']")" = RULES_NONE ] || fail "--rules none: $(cat "$WORK/none.json")"
check "no flag: the built-in proved rules (sha256 ${digest:0:16}, not the empty set's); --rules none: none"

# --- the configuration: costs from the runtime (auto), at --threads, said in the report
backend=$(json "$WORK/out.json" "d['cost_backend']")
choice=$(json "$WORK/out.json" "d.get('cost_backend_choice', '')")
threads=$(json "$WORK/out.json" "d.get('threads', 0)")
if "$TASO" profile measure 'relu(f32[1,64])' --backend ort --cache-dir none >/dev/null 2>&1; then
  [ "$backend" = BACKEND_ORT_CPU ] || fail "auto with ONNX Runtime here chose $backend: $(cat "$WORK/out.json")"
  case $choice in *"ONNX Runtime runs here"*) ;; *) fail "auto's reason: '$choice'" ;; esac
  auto="ort, ONNX Runtime running here"
else
  [ "$backend" = BACKEND_CPU ] || fail "auto without ONNX Runtime chose $backend"
  case $choice in *"ONNX Runtime is unavailable"*) ;; *) fail "auto's reason: '$choice'" ;; esac
  auto="cpu, ONNX Runtime missing here"
fi
[ "$threads" -ge 1 ] && [ "$threads" -le "$(nproc)" ] || fail "default threads $threads (nproc $(nproc))"
[ "$(json "$WORK/out.json" "d['input_shapes']")" = "['x=1x8x16x16']" ] || fail "input_shapes: $(cat "$WORK/out.json")"
grep -q "^optimized for: $threads threads\?, x=1x8x16x16; costs from " "$WORK/out.txt" ||
  fail "the text report does not say the configuration: $(cat "$WORK/out.txt")"
optimize_checked "$MODEL" -o "$WORK/t1.onnx" --time-limit 5 --threads 1 --json -q >"$WORK/t1.json" 2>"$WORK/t1.err" ||
  fail "--threads 1: $(cat "$WORK/t1.err")"
[ "$(json "$WORK/t1.json" "d['threads']")" = 1 ] || fail "--threads 1 reported $(json "$WORK/t1.json" "d['threads']")"
json "$WORK/t1.json" "d['cost_device']" | grep -q "1 \(intra-op \)\?thread[,;]" ||
  fail "--threads 1 measured on $(json "$WORK/t1.json" "d['cost_device']")"
optimize_checked "$MODEL" -o "$WORK/t1.onnx" --threads 1 --ort-threads 2 -q >"$WORK/both.out" 2>&1 && fail "--threads with --ort-threads ran"
grep -q "give --threads alone" "$WORK/both.out" || fail "--threads with --ort-threads: $(cat "$WORK/both.out")"
optimize_checked "$MODEL" -o "$WORK/nort.onnx" --time-limit 5 --ort-worker /nonexistent/worker.js --json -q \
  >"$WORK/nort.json" 2>"$WORK/nort.err" || fail "without ONNX Runtime: $(cat "$WORK/nort.err")"
[ "$(json "$WORK/nort.json" "d['cost_backend']")" = BACKEND_CPU ] || fail "no ort: $(cat "$WORK/nort.json")"
json "$WORK/nort.json" "d['cost_backend_choice']" | grep -q "unavailable here (.*/nonexistent/worker.js" ||
  fail "no ort, the reason: $(json "$WORK/nort.json" "d['cost_backend_choice']")"
check "auto costs ($auto) at $threads threads by default, said in the report with the inputs' shapes; --threads 1 measures at 1; without ONNX Runtime, cpu saying why"

# --- a local database (`taso generate --db DIR && taso verify --db DIR`) with --db
"$TASO" generate --max-ops 2 --shards 1 --db "$WORK/db" >"$WORK/gen.out" 2>&1 || fail "generate: $(cat "$WORK/gen.out")"
"$TASO" verify --db "$WORK/db" --workers 1 >"$WORK/verify.out" 2>&1 || fail "verify: $(cat "$WORK/verify.out")"
optimize_checked "$MODEL" -o "$WORK/db.onnx" --db "$WORK/db" --time-limit 5 --json -q >"$WORK/db.json" 2>"$WORK/db.err" ||
  fail "optimize --db: $(cat "$WORK/db.err")"
[ "$(json "$WORK/db.json" "d['rules_origin']")" = RULES_LOCAL_DATABASE ] || fail "--db: $(cat "$WORK/db.json")"
[ "$(json "$WORK/db.json" "d['rules_proved'] > 0 and d['rules_digest'] != '$digest'")" = True ] ||
  fail "--db rules: $(cat "$WORK/db.json")"
set +e
optimize_checked "$MODEL" -o "$WORK/db.onnx" --db "$WORK/nothing-here" -q >"$WORK/nodb.out" 2>&1; code=$?
set -e
[ $code -eq 2 ] && grep -q "no rule database at" "$WORK/nodb.out" || fail "--db of nothing: exit $code, $(cat "$WORK/nodb.out")"
check "--db DIR reads the local database's proved rules ($(json "$WORK/db.json" "d['rules_proved']") of size 2); a missing one exits 2"

# --- --json: numbers, and an error object on failure
[ "$(json "$WORK/out.json" "type(d['search_time_ms']).__name__")" = int ] || fail "search_time_ms is not a number"
[ "$(json "$WORK/out.json" "type(d['total_time_ms']).__name__")" = int ] || fail "total_time_ms is not a number"
[ "$(json "$WORK/out.json" "type(d['onnx_operators']).__name__")" = list ] || fail "no onnx_operators table"
set +e
optimize_checked "$WORK/models/truncated.onnx" -o "$WORK/bad.onnx" --json -q >"$WORK/bad.json" 2>/dev/null
code=$?
optimize_checked "$MODEL" -o "$WORK/bad.onnx" --time-limit abc --json >"$WORK/badflag.json" 2>/dev/null
flag_code=$?
set -e
[ $code -eq 2 ] || fail "a truncated model: exit $code"
[ "$(json "$WORK/bad.json" "d['error']['exit_code']")" = 2 ] || fail "error object: $(cat "$WORK/bad.json")"
[ "$(json "$WORK/bad.json" "d['error']['code']")" = INVALID_ARGUMENT ] || fail "error code: $(cat "$WORK/bad.json")"
[ -n "$(json "$WORK/bad.json" "d['error']['message']")" ] || fail "error message: $(cat "$WORK/bad.json")"
[ $flag_code -eq 2 ] && [ "$(json "$WORK/badflag.json" "d['error']['exit_code']")" = 2 ] ||
  fail "a bad flag with --json: exit $flag_code, $(cat "$WORK/badflag.json")"
check "--json: 64-bit fields are numbers; failures (a truncated model, a bad flag) print an error object, exit 2"

# --- a dynamic batch: bound to 1 with a note, or to the shape --input-shape gives; the output keeps "N"
DYN="$WORK/models/dynamic_batch.onnx"
optimize_checked "$DYN" -o "$WORK/dyn1.onnx" --time-limit 5 --json -q >"$WORK/dyn1.json" 2>/dev/null || fail "dynamic batch"
optimize_checked "$DYN" -o "$WORK/dyn4.onnx" --time-limit 5 --json -q --input-shape x=4x8x16x16 >"$WORK/dyn4.json" \
  2>/dev/null || fail "--input-shape: $(cat "$WORK/dyn4.json")"
json "$WORK/dyn1.json" "d['import_notes']" | grep -q "x\[0\] 'N'" || fail "no note of the bound batch: $(cat "$WORK/dyn1.json")"
json "$WORK/dyn4.json" "d['import_notes']" | grep -q "x=4x8x16x16" || fail "no note of the shape: $(cat "$WORK/dyn4.json")"
b1=$(json "$WORK/dyn1.json" "d['cost_baseline_ms']"); b4=$(json "$WORK/dyn4.json" "d['cost_baseline_ms']")
awk -v a="$b1" -v b="$b4" 'BEGIN { exit !(b > a) }' || fail "batch 4 should cost more than batch 1: $b4 vs $b1 ms"
for out in dyn1 dyn4; do
  [ "$(/usr/bin/python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); print(m.graph.input[0].type.tensor_type.shape.dim[0].dim_param)" "$WORK/$out.onnx")" = N ] ||
    fail "$out.onnx lost the symbolic batch"
done
set +e
optimize_checked "$DYN" -o "$WORK/dyn.onnx" -q --input-shape x=4x8x16x16 --input-shape x=2x8x16x16 >"$WORK/twice.out" 2>&1
twice=$?
optimize_checked "$DYN" -o "$WORK/dyn.onnx" -q --input-shape image=1x8x16x16 >"$WORK/name.out" 2>&1
name=$?
set -e
[ $twice -eq 2 ] && grep -q "twice" "$WORK/twice.out" || fail "a repeated input: exit $twice, $(cat "$WORK/twice.out")"
[ $name -eq 2 ] && grep -q "'image', which is not a graph input" "$WORK/name.out" || fail "a wrong name: $(cat "$WORK/name.out")"
check "a dynamic batch: 1 by default (noted), --input-shape x=4x8x16x16 costs $b4 ms vs $b1 ms; both keep 'N'; bad shapes exit 2"

# --- external data: read from beside the model; the output keeps its large tensors in OUT.data
mkdir -p "$WORK/extout"
optimize_checked "$WORK/models/external/convrelu.onnx" -o "$WORK/extout/out.onnx" --time-limit 5 --export-baseline \
  --json -q >"$WORK/ext.json" 2>"$WORK/ext.err" || fail "external data: $(cat "$WORK/ext.json" "$WORK/ext.err")"
[ -s "$WORK/extout/out.onnx.data" ] || fail "no out.onnx.data beside the output"
[ "$(json "$WORK/ext.json" "len(d.get('opaque_operators', []))")" = 0 ] || fail "weights read as opaque: $(cat "$WORK/ext.json")"
/usr/bin/python3 - "$WORK/models/convrelu.onnx" "$WORK/extout/out.onnx" <<'PY' || fail "the external-data output"
import sys, numpy as np, onnx
from onnx import numpy_helper
inp, out = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])   # onnx.load reads the data file beside the model
onnx.checker.check_model(sys.argv[2])
external = [t.name for t in onnx.load(sys.argv[2], load_external_data=False).graph.initializer
            if t.data_location == onnx.TensorProto.EXTERNAL]
assert external, "no tensor in the data file"
weights = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
for t in inp.graph.initializer:   # the convolution weights are the input's own
    if t.name in ("w1", "w2"):
        assert np.array_equal(weights[t.name], numpy_helper.to_array(t)), t.name
PY
# Every file of both models in the report, as sha256sum gives them: a CI
# record of a model with external data covers its weights too.
/usr/bin/python3 - "$WORK/ext.json" "$WORK/models/external/convrelu.onnx" "$WORK/extout/out.onnx" <<'PY' ||
import hashlib, json, os, sys
report, model_in, model_out = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
def digest(path): return hashlib.sha256(open(path, "rb").read()).hexdigest()
for key, path in (("input_files", model_in), ("output_files", model_out)):
    files = report[key]
    assert len(files) == 2, (key, files)
    assert files[0] == {"file": path, "sha256": digest(path)}, (key, files[0])
    data = os.path.join(os.path.dirname(path), files[1]["file"])
    assert os.path.getsize(data) > 0 and files[1]["sha256"] == digest(data), (key, files[1])
assert report["output_files"][1]["file"] == "out.onnx.data", report["output_files"]
PY
  fail "the files' digests: $(cat "$WORK/ext.json")"
set +e
mkdir -p "$WORK/lost" && cp "$WORK/models/external/convrelu.onnx" "$WORK/lost/"
optimize_checked "$WORK/lost/convrelu.onnx" -o "$WORK/lost/out.onnx" -q >"$WORK/lost.out" 2>&1
lost=$?
set -e
[ $lost -eq 2 ] && grep -q "keeps its data in 'convrelu.weights'" "$WORK/lost.out" ||
  fail "a missing data file: exit $lost, $(cat "$WORK/lost.out")"
check "external data: read from beside the model, the output's weights in out.onnx.data, every file digested; a missing data file exits 2"

# --- progress on a real model: a line at least every 5 s, none with -q
/usr/bin/python3 models/build_structures.py rnn_cell "$WORK/models/rnn_cell.onnx" >/dev/null ||
  fail "building the LSTM cell"
optimize_checked "$WORK/models/rnn_cell.onnx" -o "$WORK/rnn.onnx" --search eqsat --time-limit 15 --no-measure \
  2> >(while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$WORK/progress.err") \
  >"$WORK/rnn.out" || fail "optimizing the LSTM cell: $(cat "$WORK/progress.err")"
sleep 0.5  # the timestamping reader finishes its last lines
grep -q "searching (eqsat" "$WORK/progress.err" || fail "no search progress: $(cat "$WORK/progress.err")"
grep -q "rounds, [0-9]* e-nodes" "$WORK/progress.err" || fail "no e-graph figures: $(cat "$WORK/progress.err")"
grep -q "extracting the best program" "$WORK/progress.err" || fail "no extraction phase: $(cat "$WORK/progress.err")"
grep -q "checking the result" "$WORK/progress.err" || fail "no check phase: $(cat "$WORK/progress.err")"
gap=$(awk 'NR > 1 { g = $1 - prev; if (g > max) max = g } { prev = $1 } END { printf "%.1f", max }' "$WORK/progress.err")
lines=$(wc -l <"$WORK/progress.err")
awk -v g="$gap" 'BEGIN { exit !(g <= 5.0) }' || fail "a gap of $gap s between progress lines: $(cat "$WORK/progress.err")"
optimize_checked "$MODEL" -o "$WORK/quiet.onnx" --time-limit 5 -q >/dev/null 2>"$WORK/quiet.err" || fail "-q"
[ ! -s "$WORK/quiet.err" ] || fail "-q printed: $(cat "$WORK/quiet.err")"
check "progress: $lines lines on stderr over a 15 s eqsat search, the longest gap $gap s; -q prints none"
echo PASS
