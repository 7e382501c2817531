#!/usr/bin/env node
// How the ort backend's timings move between calls: times the same models again and again in one
// profiler worker (profiler/ort/worker.js, as the ort backend does: one session at a time above one
// thread), and reports each model's spread over the calls, how the models move together, and how
// much dividing by the first model (a reference timed beside every operator) would cancel.
//
//   node bench/ort/drift.js [--calls N] [--threads N] [--gap-ms MS] [--min-ms MS] [--lag N] LABEL=MODEL.onnx ...
//     --calls N    time calls, each timing every model once (default 20)
//     --threads N  intraOpNumThreads (default 2)
//     --gap-ms MS  pause between calls (default 3000: the profiler measures an operator every second or so)
//     --min-ms MS  timed run time per model and call (default 300, the profiler's)
//     --lag N      for the last column: two timings N calls apart (default 10)
// Prints one line per call (the models' medians, ms) and then, per model: median, coefficient of
// variation over the calls, correlation with the first model, the coefficient of variation of its
// time over the first model's (a reference helps only where that is below the model's own spread),
// and that of the lower of two timings --lag calls apart (what timing an operator twice, far apart,
// and keeping the faster would leave). bench/ort/drift_models.py writes the models the first run used.
'use strict';

const {spawn} = require('child_process');
const path = require('path');

function usage(msg) {
  process.stderr.write(`drift.js: ${msg}\nusage: node drift.js [--calls N] [--threads N] [--gap-ms MS] ` +
                       `[--min-ms MS] LABEL=MODEL.onnx ...\n`);
  process.exit(2);
}

function parse(argv) {
  const o = {calls: 20, threads: 2, gapMs: 3000, minMs: 300, lag: 10, labels: [], models: []};
  const numbers = {'--calls': 'calls', '--threads': 'threads', '--gap-ms': 'gapMs', '--min-ms': 'minMs', '--lag': 'lag'};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (numbers[a]) {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) usage(`${a} needs a number`);
      o[numbers[a]] = v;
    } else if (a.includes('=')) {
      const at = a.indexOf('=');
      o.labels.push(a.slice(0, at));
      o.models.push(path.resolve(a.slice(at + 1)));
    } else {
      usage(`unknown argument ${a}`);
    }
  }
  if (o.models.length < 2) usage('give at least two models: the first is the reference');
  if (o.calls < 3) usage('--calls must be at least 3');
  if (o.lag < 1 || o.lag > o.calls - 2) usage('--lag must be at least 1 and at most --calls - 2');
  return o;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const cv = (xs) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2))) / mean(xs);
function correlation(xs, ys) {
  const mx = mean(xs), my = mean(ys);
  let sxy = 0, sxx = 0, syy = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}

async function main() {
  const o = parse(process.argv.slice(2));
  const worker = spawn(process.execPath, [path.join(__dirname, '..', '..', 'profiler', 'ort', 'worker.js')],
                       {stdio: ['pipe', 'pipe', 'inherit']});
  let buffered = '';
  let answer = null;
  worker.stdout.on('data', (d) => {
    buffered += d;
    for (let at; (at = buffered.indexOf('\n')) >= 0;) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (answer) answer(JSON.parse(line));
    }
  });
  const call = (request) => new Promise((resolve) => {
    answer = resolve;
    worker.stdin.write(JSON.stringify(request) + '\n');
  });
  const times = o.models.map(() => []);
  console.log(`# call ${o.labels.join(' ')} (medians, ms; ${o.threads} threads)`);
  for (let c = 0; c < o.calls; c++) {
    const r = await call({id: c + 1, cmd: 'time', models: o.models, threads: o.threads, level: 'all', warmup: 8,
                          min_runs: 50, max_runs: 2000, min_ms: o.minMs, seed: 1, one_session: o.threads > 1});
    if (!r.ok) throw new Error(`the worker: ${r.error}`);
    const medians = r.results.map((m, i) => {
      if (!m.ok) throw new Error(`${o.labels[i]}: ${m.error}`);
      return median(m.times_ms);
    });
    medians.forEach((m, i) => times[i].push(m));
    console.log(`${c + 1} ${medians.map((m) => m.toFixed(4)).join(' ')}`);
    await new Promise((resolve) => setTimeout(resolve, o.gapMs));
  }
  worker.stdin.end();
  console.log('# model: median ms, spread (cv) over calls, correlation with the reference, cv of time / reference, ' +
              `cv of the lower of two timings ${o.lag} calls apart`);
  o.labels.forEach((label, i) => {
    const ratio = times[i].map((t, c) => t / times[0][c]);
    const lower = times[i].slice(o.lag).map((t, c) => Math.min(t, times[i][c]));
    console.log(`${label}: ${median(times[i]).toFixed(4)} ms, cv ${cv(times[i]).toFixed(3)}, ` +
                `correlation ${correlation(times[i], times[0]).toFixed(2)}, cv of ratio ${cv(ratio).toFixed(3)}, ` +
                `cv of lower of two ${cv(lower).toFixed(3)}`);
  });
}

main().catch((e) => {
  process.stderr.write(`drift.js: ${e.message}\n`);
  process.exit(3);
});
