#!/usr/bin/env bash
# Our optimizer against ONNX Runtime's own graph rewrites, on real models
# (torchvision, random weights, opset 13, batch 1). For each model:
# `taso optimize` (cpu cost backend), then onnxruntime-node (bench/ort/run.js,
# cpu EP) times four configurations in the same run, interleaved round-robin:
# the original model with graphOptimizationLevel 'disabled' and 'all', and our
# output with 'disabled' and 'all'. It also checks that ours gives the
# original's outputs on the same random input.
#   bench/ort_compare.sh [MODELS...]
#     MODELS   names for models/make_suite.sh (torchvision models and the hand-built structures)
#              (default: resnet50 inception_v3 squeezenet1_1 resnext50_32x4d)
#   environment:
#     RULES=FILE       rule file (default: a size-3 generate + verify + export, made once in WORK)
#     SEARCH=eqsat     taso optimize --search: eqsat or backtrack
#     TIME_LIMIT=60    taso optimize --time-limit, seconds
#     THREADS=2        ORT intraOpNumThreads (1 or 2 on this machine)
#     MIN_RUNS=20 MIN_SECONDS=2 WARMUP=3   timed runs per configuration: at least MIN_RUNS and MIN_SECONDS
#     TASO=BINARY      use this taso instead of building //cli:taso (-c opt) and copying it to WORK/bin
#     WORK=DIR         models, outputs, JSON and logs (default: a new temp dir); models already there are reused
# Exit 0 when every model was optimized (or returned unchanged, taso exit 4), timed and matched;
# 1 when an output mismatched or a step failed (the table is printed either way).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if (($#)); then models=("$@"); else models=(resnet50 inception_v3 squeezenet1_1 resnext50_32x4d); fi
search=${SEARCH:-eqsat}
limit=${TIME_LIMIT:-60}
threads=${THREADS:-2}
min_runs=${MIN_RUNS:-20}
min_seconds=${MIN_SECONDS:-2}
warmup=${WARMUP:-3}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/ort_compare.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
source bench/bench_env.sh
log() { bench_log "$@"; }
bench_taso
bench_ort_deps
bench_rules

status=0
rows=()
for m in "${models[@]}"; do
  onnx="$work/$m.onnx"
  ours="$work/$m.taso.onnx"
  opt_json="$work/$m.optimize.json"
  ort_json="$work/$m.ort.json"
  rm -f "$ours" "$opt_json" "$ort_json"
  if ! models/make_suite.sh "$work" "$m"; then
    rows+=("$m|export-failed|$opt_json|$ort_json|-")
    status=1
    continue
  fi
  log "$m: taso optimize --search $search --time-limit $limit"
  opt_rc=0
  "$taso" optimize "$onnx" -o "$ours" --rules "$rules" --search "$search" --backend cpu \
    --cache-dir "$work/costs" --time-limit "$limit" --json >"$opt_json" 2>"$work/$m.optimize.err" || opt_rc=$?
  models_arg=("orig=$onnx")
  if [[ $opt_rc -eq 0 || $opt_rc -eq 4 || $opt_rc -eq 5 ]]; then  # 5: checked, not measured
    models_arg+=("ours=$ours")
  else
    why=$(tail -1 "$work/$m.optimize.err")
    ((opt_rc <= 128)) || why="killed by signal $((opt_rc - 128)) $why"
    log "$m: taso optimize exit $opt_rc: $why"
    status=1
  fi
  log "$m: timing in onnxruntime-node (intraOpNumThreads=$threads)"
  ort_rc=0
  node bench/ort/run.js --threads "$threads" --min-runs "$min_runs" --min-seconds "$min_seconds" \
    --warmup "$warmup" "${models_arg[@]}" >"$ort_json" 2>"$work/$m.ort.err" || ort_rc=$?
  if [[ $ort_rc -ne 0 ]]; then
    status=1
    [[ $ort_rc -eq 1 ]] || log "$m: run.js exit $ort_rc: $(tail -3 "$work/$m.ort.err")"
  fi
  rows+=("$m|$opt_rc|$opt_json|$ort_json|$ort_rc")
done

/usr/bin/python3 - "$search" "$threads" "$min_runs" "$min_seconds" "$warmup" "$work" "${rows[@]}" <<'EOF' || status=1
import json, os, sys

search, threads, min_runs, min_seconds, warmup, work = sys.argv[1:7]
rows = [r.split("|") for r in sys.argv[7:]]

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def cell(cfgs, name):
    c = cfgs.get(name)
    return "%.1f (%.1f)" % (c["median_ms"], c["min_ms"]) if c else "-"

head = ["model", "taso", "cost ms before->after", "search s", "orig/disabled", "orig/all", "ours/disabled",
        "ours/all", "speedup dis", "speedup all", "max|diff|", "rel diff", "outputs"]
ncpu = os.cpu_count()
table, loud, versions, runs, loads = [], [], set(), [], []
for model, opt_rc, opt_json, ort_json, ort_rc in rows:
    opt, ort = load(opt_json), load(ort_json)
    taso = {"0": "ok", "4": "unchanged(4)", "export-failed": "export-failed"}.get(opt_rc, "exit " + opt_rc)
    cost = search_s = "-"
    if opt:
        cost = "%.2f -> %.2f" % (opt.get("cost_before_ms", 0), opt.get("cost_after_ms", 0))
        search_s = "%.1f" % (float(opt.get("search_time_ms", 0)) / 1000)
    cfgs, diff, rel, verdict, ratios = {}, "-", "-", "-", ["-", "-"]
    if ort:
        versions.add(ort["ort_version"]["node"])
        runs.append(min(c["runs"] for c in ort["configs"]))
        loads += ort["loadavg_1m"]
        cfgs = {c["name"]: c for c in ort["configs"]}
        ours = [c for c in ort["checks"] if c["config"].startswith("ours/")]
        if ours:
            worst = max(ours, key=lambda c: float(c["max_abs_diff"]))
            diff = "%.2e" % float(worst["max_abs_diff"])
            rel = "%.2e" % float(max(float(c["max_rel_diff"]) for c in ours))
            verdict = "match" if all(c["ok"] for c in ours) else "MISMATCH"
        for c in ort["checks"]:
            if not c["ok"]:
                loud.append("MISMATCH %s: %s vs %s: max|diff| %s, rel %s, |reference| max %s. %s" % (
                    model, c["config"], c["against"], c["max_abs_diff"], c["max_rel_diff"], c["ref_max_abs"],
                    c["detail"]))
        for i, level in enumerate(["disabled", "all"]):
            if "ours/" + level in cfgs and "orig/" + level in cfgs:
                ratios[i] = "%.2fx" % (cfgs["orig/" + level]["median_ms"] / cfgs["ours/" + level]["median_ms"])
    elif ort_rc not in ("0", "-"):
        verdict = "run.js exit " + ort_rc
    table.append([model, taso, cost, search_s, cell(cfgs, "orig/disabled"), cell(cfgs, "orig/all"),
                  cell(cfgs, "ours/disabled"), cell(cfgs, "ours/all")] + ratios + [diff, rel, verdict])

widths = [max(len(r[i]) for r in [head] + table) for i in range(len(head))]
fmt = lambda r: "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
print("taso optimize --search %s --backend cpu; ONNX Runtime (onnxruntime-node %s) cpu EP: median (min) ms" %
      (search, "/".join(sorted(versions)) or "?"))
print(fmt(head))
print("  ".join("-" * w for w in widths))
for r in table:
    print(fmt(r))
print("intraOpNumThreads=%s. The four configurations of each model were measured in the same run, interleaved "
      "round-robin, after %s warm-up runs each: medians over >= %s runs and >= %s s per configuration "
      "(fewest runs: %s). speedup = orig median / ours median at the same ORT level, > 1 means ours is faster; "
      "max|diff| and rel diff (max|diff| / max|orig output|) compare ours (both levels) with orig/disabled "
      "on one random input. 1-min load average around the timed runs: %s (%s cpus). Work dir: %s" %
      (threads, warmup, min_runs, min_seconds, min(runs) if runs else "-",
       "%.1f-%.1f" % (min(loads), max(loads)) if loads else "-", ncpu, work))
for line in loud:
    print("*** " + line)
    print("*** " + line, file=sys.stderr)
sys.exit(1 if loud else 0)
EOF
exit $status
