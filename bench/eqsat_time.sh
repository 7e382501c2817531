#!/usr/bin/env bash
# How soon eqsat reaches its best program: each model through `taso optimize --search eqsat` at several
# --time-limit values, the longest first (it fills the cost cache, so the shorter runs spend their limit
# searching, not measuring, as Tensat's figures do), then for each limit the extracted cost against the best
# any limit found and the time of each search phase from the report. A model "reaches its best" at the
# smallest limit whose cost is within 0.1 % of that best; the search time there is exploration + costing +
# extraction (the report's phases), not the import, the numeric check or the measurement around them.
#   bench/eqsat_time.sh [MODELS...]        (default: the suite's CNNs)
#   environment:
#     LIMITS="30 10 5 2"   --time-limit values, seconds (run longest first whatever the order given)
#     OPT_THREADS=N        taso optimize --threads N (default: taso's own)
#     BACKEND=auto         taso optimize --backend (auto: no flag)
#     WORK=DIR             models, rules, cost cache and reports (default /tmp/taso-eqsat-time); reused
#     RULES=FILE TASO=BINARY   as for bench/suite.sh
# Prints a table; exit 0 when every run wrote a report, 1 otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if (($#)); then
  models=("$@")
else
  models=(resnet18 resnet50 resnext50_32x4d inception_v3 densenet121 mobilenet_v2 shufflenet_v2_x1_0 squeezenet1_1
          inception_cell nasnet_cell)
fi
read -r -a limits <<<"$(tr ' ' '\n' <<<"${LIMITS:-30 10 5 2}" | grep . | sort -rn | tr '\n' ' ')"
backend=${BACKEND:-auto}
config=()
[[ $backend == auto ]] || config+=(--backend "$backend")
[[ -z ${OPT_THREADS:-} ]] || config+=(--threads "$OPT_THREADS")
work=${WORK:-${TMPDIR:-/tmp}/taso-eqsat-time}
mkdir -p "$work/results"
work=$(cd "$work" && pwd)
export TASO_ORT_WORKER=${TASO_ORT_WORKER:-$root/profiler/ort/worker.js}
source bench/bench_env.sh
bench_taso
bench_ort_deps
bench_rules

status=0
reports=()
for m in "${models[@]}"; do
  models/make_suite.sh "$work" "$m" || { status=1; continue; }
  for l in "${limits[@]}"; do
    bench_log "$m: taso optimize --search eqsat --time-limit $l"
    report="$work/results/$m.limit$l.json"
    "$taso" optimize "$work/$m.onnx" -o "$work/results/$m.limit$l.onnx" --rules "$rules" --search eqsat \
      "${config[@]}" --cache-dir "$work/costs" --time-limit "$l" --no-measure --json -q \
      >"$report" 2>"$work/results/$m.limit$l.err" || true
    [[ -s $report ]] || { bench_log "$m at $l s wrote no report: $(tail -1 "$work/results/$m.limit$l.err")"; status=1; }
    reports+=("$m=$l=$report")
  done
done

node - "${reports[@]}" <<'JS' || status=1
const fs = require('fs');
const byModel = new Map();
for (const arg of process.argv.slice(2)) {
  const [model, limit, path] = arg.split('=');
  let r = null;
  try { r = JSON.parse(fs.readFileSync(path, 'utf8')); } catch (e) { /* no report: shown as n/a */ }
  if (!byModel.has(model)) byModel.set(model, []);
  byModel.get(model).push({limit: +limit, r});
}
const cost = (r) => (r ? r.candidate_cost_ms || r.cost_after_ms || null : null);
const sec = (ms) => ((ms || 0) / 1000).toFixed(1);
const rows = [['model', 'limit s', 'cost ms', 'baseline ms', 'best?', 'explore s', 'costing s', 'extract s', 'search s',
               'total s', 'stop']];
const summary = [];
for (const [model, runs] of byModel) {
  const costs = runs.map((x) => cost(x.r)).filter((c) => c);
  const best = costs.length ? Math.min(...costs) : null;
  let first = null;
  for (const {limit, r} of [...runs].sort((a, b) => a.limit - b.limit)) {
    const c = cost(r);
    const atBest = c !== null && best !== null && c <= best * 1.001;
    const search = r ? (r.exploration_ms || 0) + (r.costing_ms || 0) + (r.extraction_ms || 0) : null;
    if (atBest && first === null) first = {limit, search};
    rows.push([model, String(limit), c === null ? 'n/a' : c.toFixed(3), r ? (r.cost_baseline_ms || 0).toFixed(3) : 'n/a',
               atBest ? 'best' : (c === null ? 'n/a' : `+${(100 * (c / best - 1)).toFixed(2)}%`),
               r ? sec(r.exploration_ms) : '-', r ? sec(r.costing_ms) : '-', r ? sec(r.extraction_ms) : '-',
               search === null ? '-' : sec(search), r ? sec(r.total_time_ms) : '-',
               r ? String(r.stop_reason || '').replace('STOP_REASON_', '').toLowerCase() : 'no report']);
  }
  summary.push(first ? `${model}: best at --time-limit ${first.limit} (search ${sec(first.search)} s)`
                     : `${model}: no report`);
}
const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((v, i) => (i === 0 ? v.padEnd(w[i]) : v.padStart(w[i]))).join('  '));
console.log('');
for (const s of summary) console.log(s);
const reached = summary.filter((s) => s.includes('best at')).length;
console.log(`${reached} of ${byModel.size} models reached their best program; costs from the longest run's cache`);
JS
exit $status
