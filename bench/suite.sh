#!/usr/bin/env bash
# The benchmark suite: every model through every search, then what the optimizer predicted against
# what ONNX Runtime measures. For each model (made by models/make_suite.sh, reused when already in
# WORK) and each search:
#   - `taso optimize --json` (cost backend $BACKEND, default taso's own: auto; at --threads $OPT_THREADS when
#     set); the whole report is kept;
#   - `taso profile graph FILE --measure --json` of input and output, for the whole-graph measured
#     speedup (n/a when the command fails);
# then, per ORT thread count, bench/ort/speedup.js times the outputs of both searches against the input
# in onnxruntime-node (cpu EP, graphOptimizationLevel all for input and output): each comparison timed
# in 4 passes of alternating session creation order, speedup = geometric mean of their ratios, an A/A
# control (the input against itself, same method) in the same run, and an outputs-equal check.
# bench/suite_report.js prints the table (with a geometric-mean row per search) and writes
# WORK/suite.json (every raw number) and WORK/suite.svg (predicted against measured speedup).
#   bench/suite.sh [MODELS...]            (default: $MODELS, else the whole suite: models/make_suite.sh --list)
#   environment:
#     MODELS="a b"       models when none are given as arguments
#     SEARCHES="eqsat backtrack"
#     TIME_LIMIT=30      taso optimize --time-limit, seconds
#     BACKEND=auto       taso optimize --backend: auto (taso's default: ort where ONNX Runtime runs, no flag
#                        passed), cpu (oneDNN) or ort (ONNX Runtime's kernels through the node worker
#                        profiler/ort/worker.js, level all); whole graphs are still measured on cpu (our runner)
#                        for the whole-graph column
#     OPT_THREADS=N      taso optimize --threads N: the configuration optimized for (default: none passed, so
#                        taso's own, one thread per physical core); THREADS defaults to N when it is set
#     MEASURE_BACKEND=B  taso optimize --measure-backend: what the never-slower step times the result on (default:
#                        the cost backend; ort: the input and output files in ONNX Runtime, whatever the costs)
#     WARM_LIMIT=S       first run each search once with this --time-limit (--no-measure, output dropped) so
#                        the cost cache is filled and the timed run's limit goes to searching; default 90 for
#                        BACKEND=ort or auto (a signature costs a session and ~50 ms of runs there), 0 (none) for
#                        cpu and analytic
#     THREADS="1 2"      ORT intraOpNumThreads, one timing per entry
#     AA_TOLERANCE=0.02 AA_TRIES=3   a timing whose A/A control falls outside 1 +- AA_TOLERANCE is run again, at
#                        most AA_TRIES times in all; the try with the A/A closest to 1 counts, every try is kept
#                        (MODEL.ortNt.tryK.json) and the report lists their A/A figures
#     MIN_RUNS=20 MIN_SECONDS=2 WARMUP=3   per timed pair and order: at least MIN_RUNS runs and MIN_SECONDS
#     WORK=DIR           models, rules, outputs, logs and results (default /tmp/taso-suite); models and the
#                        rule file already there are reused
#     RULES=FILE         rule file (default: WORK/rules.pb, made once: size-3 generate + verify + export)
#     TASO=BINARY        use this taso instead of building //cli:taso (-c opt) and copying it to WORK/bin
# Exit 0 when every step ran and every output matched; 1 otherwise (the table is printed either way).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if (($#)); then
  models=("$@")
elif [[ -n "${MODELS:-}" ]]; then
  read -r -a models <<<"$MODELS"
else
  mapfile -t models < <(models/make_suite.sh --list)
fi
read -r -a searches <<<"${SEARCHES:-eqsat backtrack}"
opt_threads=${OPT_THREADS:-}
read -r -a threads <<<"${THREADS:-${opt_threads:-1 2}}"
limit=${TIME_LIMIT:-30}
backend=${BACKEND:-auto}
warm_limit=${WARM_LIMIT:-$([[ $backend == cpu || $backend == analytic ]] && echo 0 || echo 90)}
# The configuration flags every `taso optimize` gets: none for taso's defaults.
config=()
[[ $backend == auto ]] || config+=(--backend "$backend")
[[ -z $opt_threads ]] || config+=(--threads "$opt_threads")
# The copied taso finds no runfiles: point the ort backend at this checkout's worker.
export TASO_ORT_WORKER=${TASO_ORT_WORKER:-$root/profiler/ort/worker.js}
min_runs=${MIN_RUNS:-20}
aa_tolerance=${AA_TOLERANCE:-0.02}
aa_tries=${AA_TRIES:-3}
min_seconds=${MIN_SECONDS:-2}
warmup=${WARMUP:-3}
work=${WORK:-${TMPDIR:-/tmp}/taso-suite}
mkdir -p "$work/results"
work=$(cd "$work" && pwd)
out="$work/results"
source bench/bench_env.sh
bench_taso
bench_ort_deps
bench_rules

# A JSON string: backslashes, quotes and control characters escaped.
json_str() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/ }
  s=${s//$'\t'/ }
  s=${s//$'\r'/ }
  printf '"%s"' "$s"
}

# The last line of a log, for an error message.
last_line() { tail -1 "$1" 2>/dev/null || true; }

# Whole-graph measurement of one ONNX file into $2; prints nothing, returns the command's status.
# Exit 4 means operators without a kernel on our runner (opaque to the IR: Softmax, Erf, MaxPool...),
# which it skips, so its time is not the graph's; the reason goes to $2.err for the table.
profile_graph() {
  local rc=0
  "$taso" profile graph "$1" --measure --json --backend cpu --cache-dir "$work/costs" >"$2" 2>"$2.err" || rc=$?
  if ((rc == 4)); then
    echo "$(sed -n 's/.*"opaque_skipped":\([0-9]*\).*/\1/p' "$2" | tail -1) operators our runner cannot run (opaque to the IR)" >>"$2.err"
  fi
  return $rc
}

list_json() { local a="" x; for x in "$@"; do a+="${a:+,}$(json_str "$x")"; done; printf '[%s]' "$a"; }

# A speedup.js result's A/A control (the input timed against itself), or "null" when it has none.
aa_control() {
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
           console.log(r.control && r.control.speedup > 0 ? r.control.speedup : "null")' "$1" 2>/dev/null || echo null
}
# Whether A/A figure $1 lies within 1 +- AA_TOLERANCE (either way round: 1/x counts as x does).
within_tolerance() {
  [[ $1 != null ]] && node -e 'const x = +process.argv[1], t = +process.argv[2];
                               process.exit(Math.max(x, 1 / x) <= 1 + t ? 0 : 1)' "$1" "$aa_tolerance"
}
# Whether A/A figure $1 is closer to 1 than $2 (in ratio: 1.05 and 1/1.05 are as far).
closer_to_one() {
  [[ $1 != null ]] && { [[ $2 == null ]] || node -e 'const d = (x) => Math.abs(Math.log(+x));
                                                     process.exit(d(process.argv[1]) < d(process.argv[2]) ? 0 : 1)' "$1" "$2"; }
}

manifest="$work/suite.manifest.jsonl"
: >"$manifest"
status=0
for m in "${models[@]}"; do
  onnx="$work/$m.onnx"
  if ! models/make_suite.sh "$work" "$m"; then
    for s in "${searches[@]}"; do
      printf '{"model":%s,"search":%s,"errors":[%s]}\n' "$(json_str "$m")" "$(json_str "$s")" \
        "$(json_str "making the model failed: $(last_line "$work/$m.make.err")")" >>"$manifest"
    done
    status=1
    continue
  fi
  profile_in="$out/$m.profile.json"
  profile_in_detail=""
  if ! profile_graph "$onnx" "$profile_in"; then
    profile_in_detail="taso profile graph --measure failed on the input: $(last_line "$profile_in.err")"
    profile_in=""
  fi

  declare -A opt_rc=() profile_out=() profile_detail=() errors=()
  candidates=()
  for s in "${searches[@]}"; do
    ours="$out/$m.$s.onnx"
    rm -f "$ours"
    if ((warm_limit > 0)); then
      bench_log "$m: warming the $backend cost cache: taso optimize --search $s --time-limit $warm_limit"
      "$taso" optimize "$onnx" -o "$out/$m.$s.warm.onnx" --rules "$rules" --search "$s" "${config[@]}" \
        --cache-dir "$work/costs" --time-limit "$warm_limit" --no-measure >/dev/null 2>"$out/$m.$s.warm.err" || true
      rm -f "$out/$m.$s.warm.onnx"
    fi
    bench_log "$m: taso optimize --search $s --time-limit $limit"
    rc=0
    "$taso" optimize "$onnx" -o "$ours" --rules "$rules" --search "$s" "${config[@]}" --cache-dir "$work/costs" \
      ${MEASURE_BACKEND:+--measure-backend "$MEASURE_BACKEND"} --time-limit "$limit" --json >"$out/$m.$s.optimize.json" 2>"$out/$m.$s.optimize.err" || rc=$?
    opt_rc[$s]=$rc
    errors[$s]=""
    if [[ ($rc -eq 0 || $rc -eq 4 || $rc -eq 5) && -f "$ours" ]]; then  # 5: checked, not measured
      candidates+=("$s=$ours")
      profile_detail[$s]=$profile_in_detail
      profile_out[$s]="$out/$m.$s.profile.json"
      if [[ -n "$profile_in" ]] && ! profile_graph "$ours" "${profile_out[$s]}"; then
        profile_detail[$s]="taso profile graph --measure failed on the output: $(last_line "${profile_out[$s]}.err")"
        profile_out[$s]=""
      fi
    else
      why=$(last_line "$out/$m.$s.optimize.err")
      ((rc <= 128)) || why="killed by signal $((rc - 128)) $why"
      bench_log "$m: taso optimize --search $s exit $rc: $why"
      errors[$s]=$(json_str "taso optimize exit $rc: $why")
      profile_out[$s]=""
      profile_detail[$s]="no output to measure"
      status=1
    fi
  done

  declare -A ort_json=() ort_tries=()
  for t in "${threads[@]}"; do
    ort_json[$t]="$out/$m.ort${t}t.json"
    rm -f "$out/$m.ort${t}t".try*.json
    controls=()
    best="" best_control=null
    for ((try = 1; try <= aa_tries; try++)); do
      bench_log "$m: ONNX Runtime timing, intraOpNumThreads=$t (A/A control and ${#candidates[@]} output(s)), try $try"
      attempt="$out/$m.ort${t}t.try$try.json"
      rc=0
      node bench/ort/speedup.js --level all --threads "$t" --warmup "$warmup" --min-runs "$min_runs" \
        --min-seconds "$min_seconds" "$onnx" "${candidates[@]}" >"$attempt" 2>"$out/$m.ort${t}t.err" || rc=$?
      ((rc == 0 || rc == 1)) || break  # the run itself failed: no A/A to judge, and another try would fail alike
      control=$(aa_control "$attempt")
      controls+=("$control")
      if [[ -z $best ]] || closer_to_one "$control" "$best_control"; then best=$attempt best_control=$control; fi
      within_tolerance "$control" && break
    done
    [[ -n $best ]] && cp "$best" "${ort_json[$t]}" || cp "$attempt" "${ort_json[$t]}"
    ort_tries[$t]="[$(IFS=,; echo "${controls[*]}")]"  # numbers, or null where a try had no A/A
    if ((rc != 0)); then
      status=1
      if ((rc != 1)); then  # 1 is a mismatch, which the report shows per search
        why=$(json_str "speedup.js at $t thread(s) exit $rc: $(last_line "$out/$m.ort${t}t.err")")
        bench_log "$m: $why"
        for s in "${searches[@]}"; do errors[$s]+="${errors[$s]:+,}$why"; done
      fi
    fi
  done

  for s in "${searches[@]}"; do
    speedups=""
    tries=""
    for t in "${threads[@]}"; do
      speedups+="${speedups:+,}$(json_str "$t"):$(json_str "${ort_json[$t]}")"
      tries+="${tries:+,}$(json_str "$t"):${ort_tries[$t]}"
    done
    printf '{"model":%s,"search":%s,"optimize_exit":%s,"optimize_json":%s,"speedup":{%s},"aa_tries":{%s},' \
      "$(json_str "$m")" "$(json_str "$s")" "${opt_rc[$s]}" "$(json_str "$out/$m.$s.optimize.json")" "$speedups" \
      "$tries" >>"$manifest"
    printf '"profile_input":%s,"profile_output":%s,"profile_detail":%s,"errors":[%s]}\n' \
      "$(json_str "$profile_in")" "$(json_str "${profile_out[$s]}")" "$(json_str "${profile_detail[$s]}")" \
      "${errors[$s]}" >>"$manifest"
  done
  unset opt_rc profile_out profile_detail errors ort_json ort_tries
done

node bench/suite_report.js --manifest "$manifest" --json "$work/suite.json" --svg "$work/suite.svg" \
  --set "time_limit=$limit" --set "threads=$(list_json "${threads[@]}")" \
  --set "searches=$(list_json "${searches[@]}")" --set "min_runs=$min_runs" --set "min_seconds=$min_seconds" \
  --set "cost_backend=$backend" --set "measure_backend=${MEASURE_BACKEND:-$backend}" --set "warm_limit=$warm_limit" \
  --set "optimize_threads=${opt_threads:-default}" --set "aa_tolerance=$aa_tolerance" --set "aa_tries=$aa_tries" \
  --set "warmup=$warmup" --set "work=$work" --set "rules=$rules" --set "taso=$taso" \
  --set "cpus=$(nproc)" --set "cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" \
  --set "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" --set "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" || status=1
bench_log "wrote $work/suite.json and $work/suite.svg"
exit $status
