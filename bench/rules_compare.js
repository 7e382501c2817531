#!/usr/bin/env node
// Two rule sets on the same models: joins two suite JSON documents (bench/suite.sh run once per rule
// file, by bench/rules_compare.sh) and prints, per model x search, what each set gave: predicted
// speedup, ORT-measured speedup at the first thread count, search time, rewrites available and
// e-nodes; then a geometric-mean row per search. Plain node, no packages.
//   node bench/rules_compare.js --a SUITE_A.json --b SUITE_B.json [--labels "size 3,size 4"] [--json OUT]
'use strict';

const fs = require('fs');

function args(argv) {
  const o = {labels: 'A,B'};
  for (let i = 2; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (!['a', 'b', 'labels', 'json'].includes(k) || argv[i + 1] === undefined) {
      console.error(`rules_compare: bad argument ${argv[i]}`);
      process.exit(2);
    }
    o[k] = argv[i + 1];
  }
  if (!o.a || !o.b) {
    console.error('usage: node bench/rules_compare.js --a SUITE_A.json --b SUITE_B.json [--labels A,B] [--json OUT]');
    process.exit(2);
  }
  return o;
}

function load(path) {
  try {
    return JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (e) {
    console.error(`rules_compare: cannot read ${path}: ${e.message}`);
    process.exit(2);
  }
}

function geomean(values) {
  const v = values.filter((x) => typeof x === 'number' && x > 0 && Number.isFinite(x));
  return v.length ? Math.exp(v.reduce((a, b) => a + Math.log(b), 0) / v.length) : null;
}

const fx = (v, d = 1) => (v === null || v === undefined ? '-' : Number(v).toFixed(d));
const fspeed = (v) => (v === null || v === undefined ? 'n/a' : Number(v).toFixed(3) + 'x');

// What one entry of one run contributes to the comparison.
function figures(e, thread) {
  if (!e) return null;
  const r = e.report || {};
  return {
    predicted: e.predicted_speedup,
    measured: e.ort && e.ort[thread] ? e.ort[thread].speedup : null,
    search_s: e.search_time_s,
    rewrites: r.rules_available !== undefined ? Number(r.rules_available) : null,
    enodes: e.enodes,
    outputs_equal: e.outputs_equal,
    exit: e.optimize_exit,
  };
}

function main() {
  const o = args(process.argv);
  const [la, lb] = o.labels.split(',');
  const a = load(o.a), b = load(o.b);
  const thread = String(((a.config && a.config.threads) || ['1'])[0]);
  const key = (e) => `${e.model}\u0000${e.search}`;
  const bByKey = new Map(b.entries.map((e) => [key(e), e]));
  const rows = a.entries.map((e) => ({model: e.model, search: e.search, a: figures(e, thread),
                                      b: figures(bByKey.get(key(e)), thread)}));
  const head = ['model', 'search', `pred ${la}`, `pred ${lb}`, `ORT ${la}`, `ORT ${lb}`, `search s ${la}`,
                `search s ${lb}`, `rewrites ${la}`, `rewrites ${lb}`, `e-nodes ${la}`, `e-nodes ${lb}`];
  const out = [head];
  for (const r of rows) {
    const p = (side, f) => (r[side] ? f(r[side]) : '-');
    out.push([r.model, r.search, p('a', (x) => fspeed(x.predicted)), p('b', (x) => fspeed(x.predicted)),
              p('a', (x) => fspeed(x.measured)), p('b', (x) => fspeed(x.measured)),
              p('a', (x) => fx(x.search_s)), p('b', (x) => fx(x.search_s)),
              p('a', (x) => (x.rewrites === null ? '-' : String(x.rewrites))),
              p('b', (x) => (x.rewrites === null ? '-' : String(x.rewrites))),
              p('a', (x) => (x.enodes === null ? '-' : String(x.enodes))),
              p('b', (x) => (x.enodes === null ? '-' : String(x.enodes)))]);
  }
  for (const search of [...new Set(rows.map((r) => r.search))]) {
    const rs = rows.filter((r) => r.search === search);
    const g = (side, f) => fspeed(geomean(rs.map((r) => (r[side] ? f(r[side]) : null))));
    const mean = (side) => {
      const v = rs.map((r) => (r[side] ? r[side].search_s : null)).filter((x) => typeof x === 'number');
      return v.length ? fx(v.reduce((s, x) => s + x, 0) / v.length) : '-';
    };
    out.push([`geomean (${rs.length})`, search, g('a', (x) => x.predicted), g('b', (x) => x.predicted),
              g('a', (x) => x.measured), g('b', (x) => x.measured), mean('a'), mean('b'), '', '', '', '']);
  }
  const widths = head.map((_, i) => Math.max(...out.map((row) => String(row[i]).length)));
  for (const row of out) console.log(row.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd());
  console.log(`ORT at ${thread} thread(s), speedup against the input as ONNX Runtime runs it (level all), ` +
              'position bias cancelled by swapped orders; predicted: the cost model against the runtime baseline; ' +
              'search s: mean for the geomean rows');
  const mismatched = rows.filter((r) => [r.a, r.b].some((x) => x && x.outputs_equal === false));
  if (mismatched.length) console.log(`outputs differ: ${mismatched.map((r) => `${r.model}/${r.search}`).join(', ')}`);
  if (o.json) fs.writeFileSync(o.json, JSON.stringify({labels: [la, lb], thread, rows}, null, 1) + '\n');
  process.exit(mismatched.length ? 1 : 0);
}

main();
