#!/usr/bin/env node
// Fits the cpu graph cost model (costs/graph_cost_model.h) to measured
// runtimes: for each model, what ONNX Runtime took beyond the sum of our
// kernel times for its runtime baseline is explained as
//   per_node_ms x kernel operators + per_mb_ms x MB written.
// Ordinary least squares in milliseconds, both parameters kept >= 0 (a
// negative one is dropped and the other refitted). Weighting by relative
// error was tried: one 1 ms model then decides the fit, and timing noise on
// a 1 ms model is large on a shared machine.
// Prints the fit and per-model predicted vs measured; writes the calibration.
//
//   node calibrate_fit.js --features FEATURES.jsonl --ort DIR --out FILE [--name cpu_default] [--threads N]
//     FEATURES.jsonl   bench:calibration_features output, one model per line
//     DIR              run.js JSON per model, named after the model file (NAME.json for NAME.onnx)
'use strict';

const fs = require('fs');
const path = require('path');

function usage(msg) {
  process.stderr.write(`calibrate_fit.js: ${msg}\nusage: node calibrate_fit.js --features F.jsonl --ort DIR ` +
                       `--out FILE [--name NAME] [--threads N] [--level L] [--command TEXT]\n`);
  process.exit(2);
}

const o = {name: 'cpu_default', threads: 1, level: 'all', command: ''};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const k = argv[i].replace(/^--/, '');
  if (!['features', 'ort', 'out', 'name', 'threads', 'level', 'command'].includes(k)) usage(`unknown option ${argv[i]}`);
  if (argv[i + 1] === undefined) usage(`${argv[i]} needs a value`);
  o[k] = argv[++i];
}
if (!o.features || !o.ort || !o.out) usage('give --features, --ort and --out');

const rows = [];
const excluded = [];
for (const line of fs.readFileSync(o.features, 'utf8').split('\n').filter(Boolean)) {
  const f = JSON.parse(line);
  const name = path.basename(f.model, '.onnx');
  const ortFile = path.join(o.ort, `${name}.json`);
  if (!fs.existsSync(ortFile)) {
    excluded.push({name, why: 'no ONNX Runtime timing'});
    continue;
  }
  const ort = JSON.parse(fs.readFileSync(ortFile, 'utf8'));
  const t = ort.configs[0].median_ms;
  if (f.unmeasured > 0) {
    // Operators we cannot time (opaque ones) are in ORT's time but not in our sum.
    excluded.push({name, why: `${f.unmeasured} operators without a kernel time`, ort_ms: t, kernel_ms: f.kernel_ms});
    continue;
  }
  rows.push({name, n: f.kernel_operators, mb: f.output_mb, kernel: f.kernel_ms, ort: t, load: ort.loadavg_1m});
}
if (rows.length < 2) usage(`need at least 2 models with timings and every operator measured, have ${rows.length}`);

// Least squares, no intercept: y ~ sum_j c_j x_j over the given columns,
// each model weighted by `weight(row)`. Gaussian elimination; null if singular.
function solve(cols, weight) {
  const k = cols.length;
  const A = Array.from({length: k}, () => new Array(k + 1).fill(0));
  for (const r of rows) {
    const w = weight(r);
    const x = cols.map((c) => r[c]);
    for (let i = 0; i < k; i++) {
      A[i][k] += w * x[i] * r.ort;
      for (let j = 0; j < k; j++) A[i][j] += w * x[i] * x[j];
    }
  }
  for (let i = 0; i < k; i++) {
    let p = i;
    for (let q = i + 1; q < k; q++) if (Math.abs(A[q][i]) > Math.abs(A[p][i])) p = q;
    [A[i], A[p]] = [A[p], A[i]];
    if (Math.abs(A[i][i]) < 1e-300) return null;
    for (let q = 0; q < k; q++) {
      if (q === i) continue;
      const f = A[q][i] / A[i][i];
      for (let j = i; j <= k; j++) A[q][j] -= f * A[i][j];
    }
  }
  return A.map((row, i) => row[k] / row[i]);
}

// ORT time ~ scale x (kernel sum + per_node x operators + per_mb x MB). The
// scale absorbs what differs between ORT's kernels and ours and the load of a
// shared machine (it slows both alike only on average); ratios, which is what
// the optimizer compares, do not depend on it, so the calibration keeps
// per_node_ms and per_mb_ms in our kernels' milliseconds. Every subset of the
// two terms is fitted and the best with both terms >= 0 kept, on relative
// error (each model weighted 1/ORT^2: the optimizer needs ratios right on
// small models as much as on large ones).
const relative = (r) => 1 / (r.ort * r.ort);
let best = null;
for (const terms of [['n', 'mb'], ['n'], ['mb'], []]) {
  const c = solve(['kernel', ...terms], relative);
  if (!c || !(c[0] > 0)) continue;
  const scale = c[0];
  const value = (t) => (terms.includes(t) ? c[1 + terms.indexOf(t)] / scale : 0);
  const perNode = value('n'), perMb = value('mb');
  if (perNode < 0 || perMb < 0) continue;
  const err = rows.reduce((s, r) => s + ((scale * (r.kernel + perNode * r.n + perMb * r.mb) - r.ort) / r.ort) ** 2, 0);
  if (!best || err < best.err) best = {scale, perNode, perMb, err};
}
if (!best) usage('no fit with a positive scale');
const {scale, perNode, perMb} = best;

const kernelScale = solve(['kernel'], relative)[0];
const per = rows.map((r) => {
  const modelled = r.kernel + perNode * r.n + perMb * r.mb;
  const predicted = scale * modelled;
  return {model: r.name, kernel_operators: r.n, output_mb: +r.mb.toFixed(3), kernel_sum_ms: +r.kernel.toFixed(3),
          modelled_ms: +modelled.toFixed(3), predicted_ort_ms: +predicted.toFixed(3), ort_ms: +r.ort.toFixed(3),
          // Each with its own best scale, so only the shape of the model is compared.
          error_kernel_sum: +((r.kernel * kernelScale - r.ort) / r.ort).toFixed(4),
          error_modelled: +((predicted - r.ort) / r.ort).toFixed(4)};
});
const rms = (key) => Math.sqrt(per.reduce((s, p) => s + p[key] ** 2, 0) / per.length);

const calibration = {
  name: o.name,
  per_node_ms: +perNode.toFixed(6),
  per_mb_ms: +perMb.toFixed(6),
  fitted: {
    scale_ort_over_ours: +scale.toFixed(4),
    against: `onnxruntime-node, cpu EP, level ${o.level}, ${o.threads} intra-op thread(s); our kernels on ${o.threads} ` +
             'thread(s), runtime baseline graphs',
    command: o.command,
    date: new Date().toISOString().slice(0, 10),
    rms_relative_error_kernel_sum: +rms('error_kernel_sum').toFixed(4),
    rms_relative_error_modelled: +rms('error_modelled').toFixed(4),
    models: per,
    excluded,
  },
};
// Keys this fit does not produce (the view copy rate, the weight terms `taso profile memory` measures)
// are kept from the file it replaces.
let kept = {};
try {
  kept = JSON.parse(fs.readFileSync(o.out, 'utf8'));
} catch (e) {
  kept = {};  // no file yet, or not JSON: nothing to keep
}
fs.writeFileSync(o.out, JSON.stringify({...kept, ...calibration}, null, 1) + '\n');

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`fit over ${rows.length} models: per_node_ms ${perNode.toFixed(5)}, per_mb_ms ${perMb.toFixed(5)}, ` +
            `ORT = ${scale.toFixed(3)} x modelled (kernel sum alone: ${kernelScale.toFixed(3)} x)`);
console.log(`${pad('model', 22)}${lpad('ops', 5)}${lpad('MB', 9)}${lpad('kernels', 10)}${lpad('model', 10)}` +
            `${lpad('pred', 10)}${lpad('ORT', 10)}${lpad('err sum', 9)}${lpad('err mod', 9)}`);
for (const p of per) {
  console.log(`${pad(p.model, 22)}${lpad(p.kernel_operators, 5)}${lpad(p.output_mb.toFixed(2), 9)}` +
              `${lpad(p.kernel_sum_ms.toFixed(2), 10)}${lpad(p.modelled_ms.toFixed(2), 10)}${lpad(p.predicted_ort_ms.toFixed(2), 10)}${lpad(p.ort_ms.toFixed(2), 10)}` +
              `${lpad((100 * p.error_kernel_sum).toFixed(1) + '%', 9)}${lpad((100 * p.error_modelled).toFixed(1) + '%', 9)}`);
}
console.log(`rms relative error against ORT (each scaled): kernel sum ${(100 * rms('error_kernel_sum')).toFixed(1)}%, ` +
            `modelled ${(100 * rms('error_modelled')).toFixed(1)}%`);
for (const e of excluded) console.log(`excluded ${e.name}: ${e.why}`);
console.log(`wrote ${o.out}`);
