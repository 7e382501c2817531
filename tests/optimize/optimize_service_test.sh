#!/usr/bin/env bash
# taso optimize, embedded and against a real taso_optimizer on loopback:
# activation fusion (backtrack) and a verified multi-output rule (eqsat) are
# applied, outputs pass the ONNX checker and the optimizer's numerical check,
# and malformed models get exit code 2 with a reason over both paths; opaque
# operators fed by computed-but-constant shapes still allow the check.
source tests/generate/lib.sh
OPTIMIZER="$PWD/bin/taso_optimizer"
HERE="$PWD/tests/optimize"
mkdir -p "$WORK/models"
trap 'if [ -n "${OPT_PID:-}" ]; then kill -9 "$OPT_PID" 2>/dev/null || true; fi' EXIT

/usr/bin/python3 "$HERE/make_models.py" "$WORK/models" || fail "making test models (needs python3-onnx)"
onnx_ok() { /usr/bin/python3 -c "import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]))" "$1"; }

# The rule, proved by Z3 on import, exported as the optimizer reads rules.
"$TASO" rules import "$HERE/mm2.sexpr" --db "$WORK/db" >"$WORK/import.txt" 2>&1 || fail "import: $(cat "$WORK/import.txt")"
"$TASO" rules export --db "$WORK/db" --format proto -o "$WORK/rules.pb" 2>/dev/null || fail "export"
check "rule proved and exported: $(grep -c . "$WORK/import.txt") lines of import report"

# --min-gain 0: these models' results are predicted no faster than their runtime baselines (conv, bias and
# relu fused in both); the test is of the export and the service, so they are returned, not the input.
COMMON=(--backend analytic --cache-dir none --time-limit 20 --json --min-gain 0)
optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/convrelu.opt.onnx" "${COMMON[@]}" \
  >"$WORK/convrelu.json" 2>"$WORK/convrelu.err" || fail "embedded convrelu: $(cat "$WORK/convrelu.err")"
grep -q '"rule_id":"fuse:conv2d+relu' "$WORK/convrelu.json" || fail "no fusion: $(cat "$WORK/convrelu.json")"
grep -q '"verified_numerically":true' "$WORK/convrelu.json" || fail "not verified: $(cat "$WORK/convrelu.json")"
onnx_ok "$WORK/convrelu.opt.onnx" || fail "the optimized model fails the ONNX checker"
grep -q '"rule_id":"fuse:conv2d+bias' "$WORK/convrelu.json" || fail "no bias fusion: $(cat "$WORK/convrelu.json")"
# The bias is Conv's own input again and no Add is left.
/usr/bin/python3 -c "
import onnx, sys
g = onnx.load(sys.argv[1]).graph
ops = [n.op_type for n in g.node]
assert 'Add' not in ops, ops
assert len(next(n for n in g.node if n.op_type == 'Conv' and n.input[0] == 'x').input) == 3, ops
" "$WORK/convrelu.opt.onnx" || fail "the bias add survived in the optimized model"
check "embedded backtrack: conv+bias+relu fused, checked, valid ONNX"
grep -q '"measurement":"SKIPPED_BACKEND_CANNOT_RUN"' "$WORK/convrelu.json" ||
  fail "the analytic backend cannot run graphs, and the report must say so: $(cat "$WORK/convrelu.json")"

# Never slower, on the cpu backend: the result is timed against the input's
# runtime baseline end to end; --no-measure skips it.
CPU=(--backend cpu --cache-dir none --time-limit 20 --json --min-gain 0)
optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/convrelu.cpu.onnx" "${CPU[@]}" \
  >"$WORK/cpu.json" 2>"$WORK/cpu.err" || fail "embedded cpu: $(cat "$WORK/cpu.err")"
grep -q '"measurement":"MEASURED_KEPT_\(CANDIDATE\|BASELINE\)"' "$WORK/cpu.json" || fail "not measured: $(cat "$WORK/cpu.json")"
grep -q '"measured_baseline_ms":0[,}]' "$WORK/cpu.json" && fail "no baseline time: $(cat "$WORK/cpu.json")"
grep -q '"measured_after_ms":0[,}]' "$WORK/cpu.json" && fail "no candidate time: $(cat "$WORK/cpu.json")"
optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/convrelu.nm.onnx" "${CPU[@]}" --no-measure \
  >"$WORK/nm.json" 2>"$WORK/nm.err" || fail "--no-measure: $(cat "$WORK/nm.err")"
grep -q '"measurement":"SKIPPED_DISABLED"' "$WORK/nm.json" || fail "--no-measure: $(cat "$WORK/nm.json")"
check "never slower: measured on cpu ($(grep -o '"measured_baseline_ms":[0-9.e-]*' "$WORK/cpu.json"), $(grep -o '"measured_after_ms":[0-9.e-]*' "$WORK/cpu.json")); --no-measure skips it"
# By default a result predicted no faster than the runtime baseline (within 1 %) is not returned:
# the input comes back byte for byte, unmeasured.
optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/convrelu.default.onnx" --backend cpu --cache-dir none \
  --time-limit 20 --json >"$WORK/default.json" 2>"$WORK/default.err" || fail "embedded default: $(cat "$WORK/default.err")"
grep -q '"measurement":"SKIPPED_BELOW_MIN_GAIN"' "$WORK/default.json" || fail "below the minimum gain: $(cat "$WORK/default.json")"
cmp -s "$WORK/models/convrelu.onnx" "$WORK/convrelu.default.onnx" || fail "below the minimum gain, the output is not the input"
check "default --min-gain: a result predicted no faster comes back as the input, byte for byte"

optimize_checked "$WORK/models/matmuls.onnx" -o "$WORK/matmuls.opt.onnx" --rules "$WORK/rules.pb" --search eqsat \
  --seed 7 "${COMMON[@]}" >"$WORK/matmuls.json" 2>"$WORK/matmuls.err" || fail "embedded eqsat: $(cat "$WORK/matmuls.err")"
grep -q '"verified_numerically":true' "$WORK/matmuls.json" || fail "eqsat result not verified: $(cat "$WORK/matmuls.json")"
grep -q '"rule_id":"r[0-9a-f]*"' "$WORK/matmuls.json" || fail "eqsat did not apply the proved rule: $(cat "$WORK/matmuls.json")"
onnx_ok "$WORK/matmuls.opt.onnx" || fail "the eqsat model fails the ONNX checker"
grep -q '"check_seed":7[,}]' "$WORK/matmuls.json" || fail "--seed 7 not used by the check: $(cat "$WORK/matmuls.json")"
check "embedded eqsat: the shared-input matmuls merged by the proved rule, checked with --seed 7"

# The embedded optimizer's check cap (taso_optimizer's is --max_check_mb; the ILP's
# memory cap is tested on a larger e-graph in tests/egraph).
rc=0
optimize_checked "$WORK/models/big.onnx" -o "$WORK/big.opt.onnx" "${COMMON[@]}" --max-check-mb 1 \
  >"$WORK/big.json" 2>"$WORK/big.err" || rc=$?
[ $rc -eq 2 ] || fail "--max-check-mb 1: exit $rc, not 2: $(cat "$WORK/big.err")"
grep -q "max_check_mb" "$WORK/big.err" || fail "--max-check-mb 1: the refusal does not name the flag: $(cat "$WORK/big.err")"
[ ! -e "$WORK/big.opt.onnx" ] || fail "--max-check-mb 1: a model was written"
optimize_checked "$WORK/models/big.onnx" -o "$WORK/big.opt.onnx" "${COMMON[@]}" --max-check-mb 64 \
  >"$WORK/big.json" 2>"$WORK/big.err" || fail "--max-check-mb 64: $(cat "$WORK/big.err")"
grep -q '"verified_numerically":true' "$WORK/big.json" || fail "--max-check-mb 64: not checked: $(cat "$WORK/big.json")"
check "--max-check-mb: a 1 MiB cap refuses a model whose check needs 8 MiB (exit 2, no file); 64 MiB checks it"
# Its arithmetic cap: big.onnx is about 2.1 MFLOP a run (two operators on 1M elements); the default
# 50 GFLOP checked it above.
rm -f "$WORK/big.opt.onnx"
rc=0
optimize_checked "$WORK/models/big.onnx" -o "$WORK/big.opt.onnx" "${COMMON[@]}" --max-check-gflop 0.001 \
  >"$WORK/big.json" 2>"$WORK/big.err" || rc=$?
[ $rc -eq 2 ] || fail "--max-check-gflop 0.001: exit $rc, not 2: $(cat "$WORK/big.err")"
grep -q "about 0.0 GFLOP a run .* above the limit of 0.001 GFLOP .*max_check_gflop" "$WORK/big.err" ||
  fail "--max-check-gflop 0.001: the refusal does not give the figures and the flag: $(cat "$WORK/big.err")"
[ ! -e "$WORK/big.opt.onnx" ] || fail "--max-check-gflop 0.001: a model was written"
rc=0
"$TASO" optimize "$WORK/models/big.onnx" -o "$WORK/big.opt.onnx" --max-check-gflop -1 >"$WORK/big.json" 2>"$WORK/big.err" ||
  rc=$?
[ $rc -eq 2 ] && grep -q "max-check-gflop must be above 0" "$WORK/big.err" || fail "--max-check-gflop -1: exit $rc: $(cat "$WORK/big.err")"
check "--max-check-gflop: a cap below the model's 2.1 MFLOP refuses it (exit 2, no file, the figures named); -1 is refused"

# Opaque Slice and Reshape whose operands PyTorch computes from Shape: their
# outputs get static shapes, so the result is checked numerically (exit 0).
# (--rules none: the fusion below is the structural one; proved rules may fuse it their own way.)
optimize_checked "$WORK/models/computed_shapes.onnx" -o "$WORK/computed.opt.onnx" "${COMMON[@]}" --rules none \
  >"$WORK/computed.json" 2>"$WORK/computed.err" || fail "computed shapes: exit $?: $(cat "$WORK/computed.err")"
grep -q '"verified_numerically":true' "$WORK/computed.json" || fail "not verified: $(cat "$WORK/computed.json")"
grep -q '"rule_id":"fuse:conv2d+relu' "$WORK/computed.json" || fail "no fusion: $(cat "$WORK/computed.json")"
onnx_ok "$WORK/computed.opt.onnx" || fail "the computed-shapes model fails the ONNX checker"
check "computed shapes: Slice/Reshape fed by Shape arithmetic typed, conv+relu fused, checked"

"$OPTIMIZER" --listen 127.0.0.1:0 --port_file "$WORK/port" --rules "$WORK/rules.pb" --cache_dir "$WORK/costs" \
  >"$WORK/optimizer.log" 2>&1 &
OPT_PID=$!
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || fail "taso_optimizer did not start: $(cat "$WORK/optimizer.log")"
ADDR="127.0.0.1:$(cat "$WORK/port")"
optimize_checked "$WORK/models/matmuls.onnx" -o "$WORK/matmuls.srv.onnx" --server "$ADDR" --search eqsat \
  --seed 9 "${COMMON[@]}" >"$WORK/srv.json" 2>"$WORK/srv.err" || fail "over gRPC: $(cat "$WORK/srv.err")"
grep -q '"verified_numerically":true' "$WORK/srv.json" || fail "gRPC result not verified: $(cat "$WORK/srv.json")"
grep -q '"check_seed":9[,}]' "$WORK/srv.json" || fail "--seed 9 not sent to the server's check: $(cat "$WORK/srv.json")"
grep -q '"local_check":"LOCAL_CHECK_PASSED"' "$WORK/srv.json" && grep -q '"local_check_detail":"the server.s model agrees' \
  "$WORK/srv.json" || fail "the client did not check the server's model: $(cat "$WORK/srv.json")"
grep -q '"cost_baseline_ms":[0-9]' "$WORK/srv.json" && grep -q '"cost_raw_ms":[0-9]' "$WORK/srv.json" &&
  grep -q '"cost_model":"sum of kernel times"' "$WORK/srv.json" ||
  fail "raw and baseline costs or the cost model missing over gRPC: $(cat "$WORK/srv.json")"
onnx_ok "$WORK/matmuls.srv.onnx" || fail "the gRPC model fails the ONNX checker"
# The configuration travels with the request: --threads reaches the server's profiler, which measures at it.
if "$TASO" profile measure 'relu(f32[1,64])' --backend ort --cache-dir none >/dev/null 2>&1; then
  optimize_checked "$WORK/models/matmuls.onnx" -o "$WORK/matmuls.t1.onnx" --server "$ADDR" --backend ort --threads 1 \
    --time-limit 10 --json --min-gain 0 >"$WORK/t1.json" 2>"$WORK/t1.err" || fail "--threads 1 over gRPC: $(cat "$WORK/t1.err")"
  grep -q '"threads":1[,}]' "$WORK/t1.json" && grep -q '"cost_device":"ort: [^"]* 1 intra-op thread,' "$WORK/t1.json" ||
    fail "--threads 1 over gRPC was not measured at 1 thread: $(cat "$WORK/t1.json")"
  check "over gRPC, --threads 1 is the configuration the server's ort backend measured"
else
  echo "skipped: --threads over gRPC needs ONNX Runtime (node and profiler/ort/node_modules: deploy/setup.sh)"
fi
# Provenance for CI records: sha256 of the bytes in and out, as sha256sum gives them.
for run in "matmuls.srv:$WORK/models/matmuls.onnx:$WORK/srv.json" "convrelu.opt:$WORK/models/convrelu.onnx:$WORK/convrelu.json"; do
  IFS=: read -r out in json <<<"$run"
  grep -q "\"input_sha256\":\"$(sha256sum "$in" | cut -d' ' -f1)\"" "$json" || fail "$out: input_sha256: $(cat "$json")"
  grep -q "\"output_sha256\":\"$(sha256sum "$WORK/$out.onnx" | cut -d' ' -f1)\"" "$json" || fail "$out: output_sha256"
  grep -q '"taso_version":"[0-9]' "$json" && grep -q '"rules_digest":"[0-9a-f]\{64\}"' "$json" ||
    fail "$out: taso_version or rules_digest missing: $(cat "$json")"
done
check "reports carry the version, the rule-set digest and the sha256 of the model in and out"
# Concurrent requests.
pids=()
for i in 1 2 3; do
  optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/c$i.onnx" --server "$ADDR" "${COMMON[@]}" >"$WORK/c$i.json" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a concurrent request failed"; done
grep -q '"check_seed":1[,}]' "$WORK/c1.json" || fail "the default check seed is not 1: $(cat "$WORK/c1.json")"
check "over gRPC: eqsat result verified, --seed honoured; 3 concurrent requests answered"

# Parallel CI jobs on one machine: the server holds the cost cache; two
# embedded runs on the same cache at once both work, read it, and say so.
pids=()
for i in 1 2; do
  optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/shared$i.onnx" --backend analytic --cache-dir "$WORK/costs" \
    --time-limit 20 --json >"$WORK/shared$i.json" 2>"$WORK/shared$i.err" &
  pids+=($!)
done
for i in 1 2; do wait "${pids[$((i - 1))]}" || fail "embedded run $i on a cache in use failed: $(cat "$WORK/shared$i.err")"; done
for i in 1 2; do
  grep -q "warning: cost cache .* is in use by another process: reading what it holds now" "$WORK/shared$i.err" ||
    fail "run $i did not say the cache was shared: $(cat "$WORK/shared$i.err")"
  onnx_ok "$WORK/shared$i.onnx" || fail "run $i on a shared cache wrote an invalid model"
done
check "two embedded runs at once on a cost cache the server holds: both exit 0, warned"

# An opaque operator passes through and is reported.
optimize_checked "$WORK/models/opaque.onnx" -o "$WORK/opaque.opt.onnx" --server "$ADDR" "${COMMON[@]}" \
  >"$WORK/opaque.json" 2>&1 || fail "opaque model: $(cat "$WORK/opaque.json")"
grep -q '"opaque_operators":\["::LRN"\]' "$WORK/opaque.json" || grep -q 'LRN' "$WORK/opaque.json" ||
  fail "LRN not reported: $(cat "$WORK/opaque.json")"
/usr/bin/python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); assert any(n.op_type=='LRN' for n in m.graph.node)" \
  "$WORK/opaque.opt.onnx" || fail "the LRN node was dropped"
check "LRN kept verbatim and reported"

for bad in truncated cycle dangling shapes; do
  for via in embedded server; do
    extra=()
    [ "$via" = server ] && extra=(--server "$ADDR")
    set +e
    optimize_checked "$WORK/models/$bad.onnx" -o "$WORK/$bad.out" "${extra[@]}" --backend analytic --cache-dir none \
      >"$WORK/$bad.$via.out" 2>"$WORK/$bad.$via.err"
    code=$?
    set -e
    [ "$code" = 2 ] || fail "$bad via $via: exit $code, want 2: $(cat "$WORK/$bad.$via.err")"
    [ -s "$WORK/$bad.$via.err" ] || fail "$bad via $via: no message"
  done
  echo "  $bad: $(head -c 200 "$WORK/$bad.server.err")"
done
check "malformed models: exit 2 with a reason, embedded and over gRPC"

kill -TERM "$OPT_PID"
wait "$OPT_PID" || fail "taso_optimizer exited non-zero on SIGTERM"
OPT_PID=
set +e
optimize_checked "$WORK/models/convrelu.onnx" -o "$WORK/x.onnx" --server "$ADDR" >/dev/null 2>"$WORK/down.err"
code=$?
set -e
[ "$code" = 3 ] || fail "stopped server: exit $code, want 3"
check "server gone: exit 3"
echo PASS
