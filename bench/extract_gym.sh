#!/usr/bin/env bash
# Every extractor (greedy, DAG greedy, ILP) on every e-graph of a directory of
# egraph-serialize JSON files, one `taso egraph extract` per file, and a table:
# DAG cost and time per extractor, what the ILP proved (optimal, or its gap),
# and whether ILP <= DAG greedy <= greedy held.
#   bench/extract_gym.sh DIR [TIME_LIMIT_S]
# With SUITE=DIR_OF_ONNX and RULES=FILE it first dumps the e-graphs eqsat builds
# for the suite models named in MODELS (default: resnet50 inception_v3
# transformer_layer rnn_cell nasrnn_cell) into DIR with `taso optimize --search
# eqsat --dump-egraph` (cpu costs, cache DIR/costs unless COSTS is given;
# SEARCH_LIMIT seconds each, default 30), keeping each report to show the
# in-process extraction's cost beside the file's.
set -euo pipefail
dir=${1:?give the directory of e-graph JSON files}
limit=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build -c opt //cli:taso >/dev/null 2>&1
taso="$root/bazel-out/k8-opt/bin/cli/taso"
mkdir -p "$dir"
if [ -n "${SUITE:-}" ]; then
  : "${RULES:?give RULES (taso rules export --format proto) with SUITE}"
  for model in ${MODELS:-resnet50 inception_v3 transformer_layer rnn_cell nasrnn_cell}; do
    rc=0
    "$taso" optimize "$SUITE/$model.onnx" -o "$dir/$model.opt.onnx" --rules "$RULES" --search eqsat \
      --backend cpu --cache-dir "${COSTS:-$dir/costs}" --time-limit "${SEARCH_LIMIT:-30}" --no-measure --min-gain 0 \
      --json --dump-egraph "$dir/$model.json" >"$dir/$model.report" 2>"$dir/$model.err" || rc=$?
    [[ $rc -eq 0 || $rc -eq 4 ]] || { echo "$model: optimize exit $rc: $(tail -2 "$dir/$model.err")"; continue; }
    rm -f "$dir/$model.opt.onnx"
    echo "dumped $model ($(stat -c %s "$dir/$model.json") bytes)"
  done
fi
out="$dir/extract.jsonl"
: >"$out"
for file in "$dir"/*.json; do
  [ -e "$file" ] || { echo "no .json files in $dir"; exit 1; }
  /usr/bin/time -f '%M' -o "$file.rss" "$taso" egraph extract "$file" --json --time-limit "$limit" >>"$out" ||
    echo "$(basename "$file"): taso egraph extract failed" >&2
done
node - "$out" "$dir" <<'JS'
const fs = require('fs');
const path = require('path');
const [out, dir] = process.argv.slice(2);
const rows = fs.readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).map(JSON.parse);
const fmt = (x, d = 4) => (x === undefined || x === null ? '-' : Number(x).toFixed(d));
console.log('| e-graph | classes | e-nodes | greedy | DAG greedy | ILP | ILP result | ILP s | in-process | peak RSS | order |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
let ok = 0;
for (const r of rows) {
  const by = Object.fromEntries(r.results.map((x) => [x.extractor, x]));
  const g = by['greedy'], d = by['greedy-dag'], i = by['ilp'];
  const held = g && d && i && i.dag_cost <= d.dag_cost + 1e-12 && d.dag_cost <= g.dag_cost + 1e-12;
  ok += held ? 1 : 0;
  const result = !i ? '-' : i.optimal ? 'optimal' : i.stop === 'failed' ? `failed: ${i.error}` :
      `${i.stop}, gap ${(100 * i.gap).toFixed(1)}%`;
  const base = r.file.replace(/\.json$/, '');
  let inProcess = '-';
  try { inProcess = fmt(JSON.parse(fs.readFileSync(base + '.report', 'utf8')).extraction_cost_ms); } catch (e) {}
  let rss = '-';
  try { rss = `${Math.round(Number(fs.readFileSync(r.file + '.rss', 'utf8').trim().split('\n').pop()) / 1024)} MB`; } catch (e) {}
  console.log(`| ${path.basename(r.file)} | ${r.classes} | ${r.enodes} | ${fmt(g && g.dag_cost)} (${fmt(g && g.seconds, 2)} s) | ` +
      `${fmt(d && d.dag_cost)} (${fmt(d && d.seconds, 2)} s)${d && d.kept_earlier ? ' =greedy' : ''} | ${fmt(i && i.dag_cost)} | ` +
      `${result} | ${fmt(i && i.seconds, 1)} | ${inProcess} | ${rss} | ${held ? 'ILP <= DAG <= greedy' : 'VIOLATED'} |`);
}
console.log(`${ok} of ${rows.length} files: ILP <= DAG greedy <= greedy (DAG costs in the files' units: ms for ours)`);
JS
