#!/usr/bin/env node
// The benchmark suite's report: gathers what bench/suite.sh wrote for each model x search (the
// `taso optimize --json` report, bench/ort/speedup.js's ORT timings per thread count, the whole-graph
// measurements of `taso profile graph --measure --json`) into one JSON document, prints the table and
// draws predicted against ORT-measured speedup as an SVG scatter plot. Plain node, no packages.
//
//   node bench/suite_report.js --manifest LINES.jsonl --json OUT.json --svg OUT.svg [--set KEY=VALUE ...]
//       collect (one JSON object a manifest line, written by suite.sh), write both files, print the table
//   node bench/suite_report.js --suite SUITE.json [--svg OUT.svg]
//       print the table of a suite JSON written before (and draw it again)
// Exit 0 when every entry ran and its outputs matched, 1 otherwise (the table is printed either way),
// 2 on bad usage or unreadable input.
'use strict';

const fs = require('fs');

function readJson(path) {
  try {
    return JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (e) {
    return null;
  }
}

// The first field present among the spellings (the JSON printer keeps proto names; camelCase also read).
function field(obj, ...names) {
  if (!obj) return undefined;
  for (const n of names) {
    if (obj[n] !== undefined && obj[n] !== null) return obj[n];
  }
  return undefined;
}

const num = (v) => (v === undefined || v === null || v === '' || Number.isNaN(Number(v)) ? null : Number(v));

// The whole-graph measured time in a `taso profile graph --measure --json` output (its last JSON line).
function measuredMs(path) {
  if (!path) return null;
  let text;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    return null;
  }
  const lines = text.split('\n').filter((l) => l.trim().startsWith('{'));
  for (const line of lines.reverse()) {
    let o;
    try {
      o = JSON.parse(line);
    } catch (e) {
      continue;
    }
    const v = num(field(o, 'measured_ms', 'measuredMs', 'measured_total_ms', 'measuredTotalMs', 'whole_graph_ms',
                        'wholeGraphMs'));
    if (v !== null) return v;
  }
  return null;
}

// One model x search from its manifest line.
function entryFrom(line) {
  const errors = [...(line.errors || [])];
  const report = line.optimize_json ? readJson(line.optimize_json) : null;
  if (line.optimize_json && !report && line.optimize_exit !== undefined) errors.push('no optimize report');
  const e = {model: line.model, search: line.search, optimize_exit: line.optimize_exit ?? null, report};
  e.cost_raw_ms = num(field(report, 'cost_raw_ms', 'costRawMs'));
  const baseline = num(field(report, 'cost_baseline_ms', 'costBaselineMs'));
  e.cost_baseline_ms = baseline !== null ? baseline : num(field(report, 'cost_before_ms', 'costBeforeMs'));
  e.cost_baseline_source = baseline !== null ? 'cost_baseline_ms' : 'cost_before_ms';
  e.cost_after_ms = num(field(report, 'cost_after_ms', 'costAfterMs'));
  e.predicted_speedup = e.cost_baseline_ms && e.cost_after_ms ? e.cost_baseline_ms / e.cost_after_ms : null;
  const searchMs = num(field(report, 'search_time_ms', 'searchTimeMs'));
  e.search_time_s = searchMs === null ? null : searchMs / 1000;
  const totalMs = num(field(report, 'total_time_ms', 'totalTimeMs'));
  e.total_time_s = totalMs === null ? null : totalMs / 1000;
  // The Report has no e-node count of its own: eqsat's stop_detail says "(N iterations, M e-nodes, ...)".
  const detail = String(field(report, 'stop_detail', 'stopDetail') || '');
  const m = detail.match(/([0-9][0-9,]*) e-nodes/);
  e.enodes = m ? Number(m[1].replace(/,/g, '')) : null;
  e.enodes_source = m ? 'stop_detail' : null;
  e.returned_original = Boolean(field(report, 'returned_original', 'returnedOriginal'));
  // The optimizer returned the input byte for byte (nothing found, below --min-gain, measured slower, or a
  // failed check: the report's digests of input and output agree): the user's speedup is 1 by construction,
  // and timing the file against itself measures only noise (the A/A column's business), which must not read
  // as a slowdown or a gain. The timing is kept as same_file_ratio.
  const inSha = field(report, 'input_sha256', 'inputSha256');
  e.output_is_input = Boolean(field(report, 'output_is_input', 'outputIsInput')) ||
      Boolean(inSha && inSha === field(report, 'output_sha256', 'outputSha256'));
  // What the search's own result was predicted and measured at, whether or not it came back (a rejected
  // candidate's prediction is the one never-slower caught being wrong).
  const candidateMs = num(field(report, 'candidate_cost_ms', 'candidateCostMs'));
  e.candidate = {
    predicted_speedup: candidateMs && e.cost_baseline_ms ? e.cost_baseline_ms / candidateMs : null,
    measured_speedup: num(field(report, 'measured_speedup', 'measuredSpeedup')) || null,
    measured_backend: field(report, 'measured_backend', 'measuredBackend') || null,
    verdict: field(report, 'measurement') || null,
  };

  e.ort = {};
  let matched = null;
  for (const [threads, path] of Object.entries(line.speedup || {})) {
    const s = readJson(path);
    if (!s) {
      errors.push(`no ORT result at ${threads} thread(s)`);
      continue;
    }
    const cand = (s.candidates || []).find((c) => c.label === line.search);
    const check = (s.checks || []).find((c) => c.label === line.search);
    e.ort[threads] = {
      speedup: cand ? (e.output_is_input ? 1 : cand.speedup) : null,
      same_file_ratio: cand && e.output_is_input ? cand.speedup : null,
      ratios: cand ? cand.ratios : null,
      base_median_ms: cand ? cand.orders.map((o) => o.base.median_ms) : null,
      candidate_median_ms: cand ? cand.orders.map((o) => o.candidate.median_ms) : null,
      runs: cand ? Math.min(...cand.orders.map((o) => Math.min(o.base.runs, o.candidate.runs))) : null,
      control: s.control ? s.control.speedup : null,
      control_ratios: s.control ? s.control.ratios : null,
      // Every try's A/A figure when suite.sh repeated the timing for an A/A outside its tolerance.
      aa_tries: (line.aa_tries && line.aa_tries[threads]) || null,
      loadavg_1m: [].concat(...[s.control, cand].filter(Boolean).map((p) => p.orders.map((o) => o.loadavg_1m))),
      ort_version: s.ort_version ? s.ort_version.node : null,
      max_abs_diff: check ? num(check.max_abs_diff) : null,
      max_rel_diff: check ? num(check.max_rel_diff) : null,
    };
    if (check) matched = (matched === null ? true : matched) && Boolean(check.ok);
  }
  e.outputs_equal = matched;

  // Preferred: the optimizer's own never-slower measurement (the runtime baseline against the result, one
  // interleaved run in both orders); else two separate `taso profile graph --measure` runs of input and output.
  // The report's figure is this column's only when it timed the returned model on our runner: not when
  // ONNX Runtime decided never-slower (that is the ORT columns' business), and not when the candidate it
  // timed was rejected (the returned model is then the input, and the figure describes a discarded graph).
  const reportBase = num(field(report, 'measured_baseline_ms', 'measuredBaselineMs'));
  const reportAfter = num(field(report, 'measured_after_ms', 'measuredAfterMs'));
  // The optimizer's ratio is the geometric mean over its passes (creation orders), where it reports one.
  const reportSpeedup = e.candidate.measured_speedup;
  const measuredBackend = e.candidate.measured_backend;
  const reportTimedResultOnOurRunner = (!measuredBackend || measuredBackend === 'BACKEND_CPU') &&
      (!e.candidate.verdict || e.candidate.verdict === 'MEASURED_KEPT_CANDIDATE' ||
       e.candidate.verdict === 'MEASURED_KEPT_REEXPORT');
  if (e.output_is_input) {
    e.whole_graph = {input_ms: null, output_ms: null, speedup: 1, source: 'the input returned byte for byte',
                     detail: null};
  } else if (reportBase && reportAfter && reportTimedResultOnOurRunner) {
    e.whole_graph = {input_ms: reportBase, output_ms: reportAfter, speedup: reportSpeedup || reportBase / reportAfter,
                     source: reportSpeedup ? 'report measured_speedup (per-pass geometric mean)'
                                           : 'report measured_baseline_ms / measured_after_ms',
                     backend: measuredBackend,
                     detail: field(report, 'measurement_detail', 'measurementDetail') || null};
  } else {
    const base = measuredMs(line.profile_input);
    const after = measuredMs(line.profile_output);
    e.whole_graph = {input_ms: base, output_ms: after, speedup: base && after ? base / after : null,
                     source: 'taso profile graph --measure, input and output apart', detail: line.profile_detail || null};
  }
  if (e.outputs_equal === false) errors.push('outputs differ');
  e.errors = errors;
  return e;
}

function geomean(values) {
  const v = values.filter((x) => typeof x === 'number' && x > 0 && Number.isFinite(x));
  return v.length ? Math.exp(v.reduce((a, b) => a + Math.log(b), 0) / v.length) : null;
}

const threadList = (suite) => (suite.config && suite.config.threads) ||
    [...new Set([].concat(...suite.entries.map((e) => Object.keys(e.ort || {}))))].sort();

const fx = (v, d = 2) => (v === null || v === undefined ? '-' : Number(v).toFixed(d));
const fspeed = (v) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(3) + 'x');

// The search's own result: its predicted speedup over the runtime baseline and what never-slower measured
// ("-" where it did not measure), whether or not it was returned.
function candidateText(c) {
  if (!c || c.predicted_speedup === null || c.predicted_speedup === undefined) return '-';
  return `${fspeed(c.predicted_speedup)}/${c.measured_speedup ? fspeed(c.measured_speedup) : '-'}`;
}

// The A/A figure, with the number of tries when the timing was repeated for it: "1.012x (3)".
function controlText(o) {
  if (!o) return fspeed(null);
  const tries = Array.isArray(o.aa_tries) ? o.aa_tries.length : 1;
  return fspeed(o.control) + (tries > 1 ? ` (${tries})` : '');
}

function table(suite) {
  const threads = threadList(suite);
  const head = ['model', 'search', 'exit', 'raw ms', 'base ms', 'after ms', 'pred', 'candidate pred/meas',
                ...threads.map((t) => `ORT ${t}t`), ...threads.map((t) => `A/A ${t}t`), 'whole-graph',
                'search s', 'e-nodes', 'outputs'];
  const rows = suite.entries.map((e) => [
    e.model, e.search, e.optimize_exit === null ? '-' : String(e.optimize_exit), fx(e.cost_raw_ms),
    fx(e.cost_baseline_ms), fx(e.cost_after_ms), fspeed(e.predicted_speedup), candidateText(e.candidate),
    ...threads.map((t) => (e.output_is_input && e.ort[t] ? '= input' : fspeed(e.ort[t] && e.ort[t].speedup))),
    ...threads.map((t) => controlText(e.ort[t])),
    e.output_is_input ? '= input' : fspeed(e.whole_graph && e.whole_graph.speedup), fx(e.search_time_s, 1),
    e.enodes === null ? '-' : String(e.enodes),
    e.outputs_equal === null ? '-' : e.outputs_equal ? 'equal' : 'DIFFER',
  ]);
  for (const search of [...new Set(suite.entries.map((e) => e.search))]) {
    const es = suite.entries.filter((e) => e.search === search);
    rows.push([`geomean (${es.length})`, search, '', '', '', '', fspeed(geomean(es.map((e) => e.predicted_speedup))), '',
               ...threads.map((t) => fspeed(geomean(es.map((e) => e.ort[t] && e.ort[t].speedup)))),
               ...threads.map((t) => fspeed(geomean(es.map((e) => e.ort[t] && e.ort[t].control)))),
               fspeed(geomean(es.map((e) => e.whole_graph && e.whole_graph.speedup))), '', '', '']);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r) => r.map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  const lines = [fmt(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)];
  const c = suite.config || {};
  lines.push(`cost: the optimizer's cost model (raw input / baseline = ${
    suite.entries.some((e) => e.cost_baseline_source === 'cost_before_ms') ? 'cost_before_ms where the report has no ' +
    'cost_baseline_ms' : 'cost_baseline_ms'} / after), pred = baseline / after. ORT: onnxruntime-node ${
    c.ort_version || '?'}, cpu EP, level all for input and output, intraOpNumThreads per column; each speedup is ` +
    'the geometric mean over passes of alternating session creation order (bench/ort/speedup.js ' +
    '--passes, 4 by default; input median / output median; the two sessions of a pass take turns at 1 thread and ' +
    'run one at a time above it, --sessions); A/A = the input against itself, same method, same run. whole-graph = our oneDNN whole-graph runner: ' +
    'the optimizer\'s never-slower measurement (runtime baseline / result, interleaved) where it timed the returned model on our runner, else ' +
    'taso profile graph --measure (input / output; n/a when the command failed). = input: the optimizer returned ' +
    'the input byte for byte, so the speedup is 1 by construction (counted as 1.000 in the geometric means; its ' +
    'timing against itself is kept in suite.json as same_file_ratio). candidate pred/meas = the search\'s own ' +
    'result, returned or not: baseline / candidate_cost_ms, and the never-slower step\'s measured speedup on its ' +
    'measure backend (- where it did not measure). e-nodes from the report\'s stop_detail (eqsat only).');
  const facts = [];
  if (c.time_limit !== undefined) facts.push(`time limit ${c.time_limit} s`);
  if (c.min_runs !== undefined) {
    facts.push(`>= ${c.min_runs} runs and >= ${c.min_seconds} s per timed configuration and order, ${c.warmup} warm-up`);
  }
  if (c.cpus !== undefined) facts.push(`${c.cpus} cpus (${c.cpu_model || '?'}), load average ${c.loadavg || '?'}`);
  if (c.date !== undefined) facts.push(c.date);
  if (c.work !== undefined) facts.push(`work dir ${c.work}`);
  if (facts.length) lines.push(facts.join('; '));
  const whyNa = [...new Set(suite.entries.filter((e) => e.whole_graph && e.whole_graph.speedup === null)
                                       .map((e) => e.whole_graph.detail).filter(Boolean))];
  for (const why of whyNa) lines.push(`whole-graph n/a: ${why}`);
  if (suite.entries.some((e) => Object.values(e.ort).some((o) => Array.isArray(o.aa_tries) && o.aa_tries.length > 1))) {
    const tol = c.aa_tolerance !== undefined ? `${+(100 * c.aa_tolerance).toPrecision(2)} %` : 'its tolerance';
    lines.push(`A/A (n): the ORT timing ran n times, the A/A control outside 1 +- ${tol} before the last; ` +
               'the try with the A/A closest to 1 is shown (suite.json keeps every try\'s A/A)');
  }
  for (const e of suite.entries) {
    for (const err of e.errors) lines.push(`*** ${e.model} ${e.search}: ${err}`);
  }
  return lines.join('\n') + '\n';
}

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

// One panel per ORT thread count, one row per model x search: the measured speedup in ONNX Runtime as a
// bar from 1, the A/A control's spread as a band around 1 (a bar inside it is noise), and the predicted
// speedup as a diamond beside the bar; a row the optimizer returned as the input says so instead of a bar.
// Labels sit left of the rows, so no two share a place however many models land on 1.00.
function svg(suite) {
  const threads = threadList(suite);
  const rows = suite.entries.map((e) => ({label: `${e.model}/${e.search}`, search: e.search, e}));
  const speedups = [];
  for (const {e} of rows) {
    for (const t of threads) {
      const o = e.ort[t];
      if (o && typeof o.speedup === 'number') speedups.push(o.speedup);
      if (o && typeof o.control === 'number' && o.control > 0) speedups.push(o.control, 1 / o.control);
    }
    if (typeof e.predicted_speedup === 'number') speedups.push(e.predicted_speedup);
  }
  let lo = Math.min(0.9, ...speedups) - 0.02, hi = Math.max(1.1, ...speedups) + 0.02;
  lo = Math.floor(lo * 20) / 20;
  hi = Math.ceil(hi * 20) / 20;
  const labelW = 10 + 7 * Math.max(8, ...rows.map((r) => r.label.length));
  const panelW = 320, gap = 30, rowH = 18, T = 60, B = 50;
  const W = labelW + threads.length * (panelW + gap) + 10, H = T + Math.max(1, rows.length) * rowH + B;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
           'font-family="sans-serif" font-size="11">');
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="white"/>`);
  const c = suite.config || {};
  const configured = c.optimize_threads && c.optimize_threads !== 'default' ? `optimized for ${c.optimize_threads} ` +
      `thread${String(c.optimize_threads) === '1' ? '' : 's'}` : 'optimized with taso\'s default threads';
  out.push(`<text x="${W / 2}" y="18" text-anchor="middle" font-size="14">measured speedup in ONNX Runtime (bars) ` +
           `and predicted (diamonds); ${esc(configured)}, costs ${esc(c.cost_backend || '?')}</text>`);
  out.push(`<text x="${W / 2}" y="34" text-anchor="middle">shaded: the A/A control's spread around 1 (the input ` +
           'against itself in the same run): a bar inside it is noise</text>');
  rows.forEach((r, i) => {
    out.push(`<text x="${labelW - 8}" y="${T + i * rowH + rowH / 2 + 4}" text-anchor="end">${esc(r.label)}</text>`);
  });
  const colors = {eqsat: '#1f5fa8', backtrack: '#c2410c'};
  threads.forEach((t, k) => {
    const x0 = labelW + k * (panelW + gap);
    const sx = (v) => x0 + (Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo) * panelW;
    out.push(`<g class="panel" data-threads="${esc(t)}">`);
    out.push(`<text x="${x0 + panelW / 2}" y="${T - 8}" text-anchor="middle" font-size="12">${esc(t)} thread` +
             `${String(t) === '1' ? '' : 's'}</text>`);
    out.push(`<rect x="${x0}" y="${T}" width="${panelW}" height="${rows.length * rowH}" fill="none" stroke="#999"/>`);
    const raw = (hi - lo) / 6;
    const pow = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((v) => v >= raw);
    for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + 1e-9; i++) {
      const v = Math.round(i * step * 1000) / 1000;
      out.push(`<line x1="${sx(v)}" y1="${T}" x2="${sx(v)}" y2="${T + rows.length * rowH + 4}" stroke="#eee"/>`);
      out.push(`<text x="${sx(v)}" y="${T + rows.length * rowH + 16}" text-anchor="middle">${v.toFixed(2)}</text>`);
    }
    out.push(`<line class="one" x1="${sx(1)}" y1="${T}" x2="${sx(1)}" y2="${T + rows.length * rowH}" stroke="#333"/>`);
    rows.forEach((r, i) => {
      const y = T + i * rowH, o = r.e.ort[t] || {};
      const parts = [`<g class="entry" data-label="${esc(r.label)}" data-threads="${esc(t)}">`];
      if (typeof o.control === 'number' && o.control > 0) {
        const spread = Math.max(o.control, 1 / o.control);
        parts.push(`<rect class="aa-band" x="${sx(1 / spread).toFixed(1)}" y="${y + 1}" ` +
                   `width="${(sx(spread) - sx(1 / spread)).toFixed(1)}" height="${rowH - 2}" fill="#dfe9f5"/>`);
      }
      if (r.e.output_is_input && o.speedup !== undefined) {
        parts.push(`<text class="input" x="${sx(1) + 4}" y="${y + rowH / 2 + 4}" fill="#666">= input</text>`);
      } else if (typeof o.speedup === 'number') {
        const a = sx(Math.min(1, o.speedup)), b = sx(Math.max(1, o.speedup));
        parts.push(`<rect class="measured" x="${a.toFixed(1)}" y="${y + 4}" width="${Math.max(1, b - a).toFixed(1)}" ` +
                   `height="${rowH - 8}" fill="${colors[r.search] || '#333'}"><title>${esc(r.label)}: measured ` +
                   `${o.speedup.toFixed(3)}x at ${esc(t)} thread(s)${typeof o.control === 'number' ? `, A/A ` +
                   `${o.control.toFixed(3)}x` : ''}</title></rect>`);
      }
      if (typeof r.e.predicted_speedup === 'number') {
        const px = sx(r.e.predicted_speedup), py = y + rowH / 2;
        parts.push(`<path class="predicted" d="M${px.toFixed(1)} ${py - 5}L${(px + 5).toFixed(1)} ${py}L${px.toFixed(1)} ` +
                   `${py + 5}L${(px - 5).toFixed(1)} ${py}Z" fill="white" stroke="black"><title>${esc(r.label)}: ` +
                   `predicted ${r.e.predicted_speedup.toFixed(3)}x</title></path>`);
      }
      parts.push('</g>');
      out.push(parts.join(''));
    });
    out.push('</g>');
  });
  let lx = labelW;
  for (const [search, color] of Object.entries(colors)) {
    out.push(`<rect x="${lx}" y="${H - 22}" width="12" height="10" fill="${color}"/><text x="${lx + 16}" y="${H - 13}">` +
             `${search}</text>`);
    lx += 90;
  }
  out.push(`<path d="M${lx + 5} ${H - 22}L${lx + 10} ${H - 17}L${lx + 5} ${H - 12}L${lx} ${H - 17}Z" fill="white" ` +
           `stroke="black"/><text x="${lx + 16}" y="${H - 13}">predicted</text>`);
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function failed(suite) {
  return suite.entries.some((e) => e.errors.length || e.outputs_equal === false);
}

function usage(msg) {
  process.stderr.write(`suite_report.js: ${msg}\nusage: node suite_report.js --manifest LINES.jsonl --json OUT.json ` +
                       '--svg OUT.svg [--set KEY=VALUE ...] | --suite SUITE.json [--svg OUT.svg]\n');
  process.exit(2);
}

function main(argv) {
  const o = {set: {}};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[++i];
    if (v === undefined) usage(`${a} needs a value`);
    if (a === '--manifest') o.manifest = v;
    else if (a === '--suite') o.suite = v;
    else if (a === '--json') o.json = v;
    else if (a === '--svg') o.svg = v;
    else if (a === '--set') {
      const eq = v.indexOf('=');
      if (eq <= 0) usage('--set needs KEY=VALUE');
      const raw = v.slice(eq + 1);
      o.set[v.slice(0, eq)] = raw.startsWith("[") || /^-?[0-9]+(\.[0-9]+)?$/.test(raw) ? JSON.parse(raw) : raw;
    } else usage(`unknown option ${a}`);
  }
  if (!o.manifest === !o.suite) usage('give --manifest or --suite');
  let suite;
  if (o.manifest) {
    if (!o.json || !o.svg) usage('--manifest needs --json and --svg');
    let lines;
    try {
      lines = fs.readFileSync(o.manifest, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    } catch (e) {
      usage(`cannot read ${o.manifest}: ${e.message}`);
    }
    suite = {config: o.set, entries: lines.map(entryFrom)};
    const versions = [...new Set([].concat(...suite.entries.map((e) => Object.values(e.ort).map((r) => r.ort_version))))]
        .filter(Boolean);
    if (versions.length && !suite.config.ort_version) suite.config.ort_version = versions.join('/');
    fs.writeFileSync(o.json, JSON.stringify(suite, null, 1) + '\n');
  } else {
    suite = readJson(o.suite);
    if (!suite || !Array.isArray(suite.entries)) usage(`${o.suite} is not a suite JSON (no entries)`);
  }
  if (o.svg) fs.writeFileSync(o.svg, svg(suite));
  process.stdout.write(table(suite));
  return failed(suite) ? 1 : 0;
}

module.exports = {entryFrom, table, svg, geomean};

if (require.main === module) process.exitCode = main(process.argv.slice(2));
