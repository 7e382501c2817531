// What the ORT timing scripts share (run.js, speedup.js): deterministic random
// inputs, session creation, the output check, and interleaved timing with
// summaries. Nothing here prints.
'use strict';

const os = require('os');
const ort = require('onnxruntime-node');

// Deterministic random inputs, the same the profiler's ort worker feeds.
const {randomFeeds} = require('../../profiler/ort/random_feeds');
const makeFeeds = (session, seed) => randomFeeds(ort, session, seed, 'run.js');

// Feeds for another model: by name when every name is present, by position otherwise.
function feedsFor(session, feeds) {
  const names = Object.keys(feeds);
  if (session.inputNames.every((n) => n in feeds)) {
    return Object.fromEntries(session.inputNames.map((n) => [n, feeds[n]]));
  }
  if (session.inputNames.length !== names.length) {
    throw new Error(`input count differs: ${session.inputNames.join(',')} vs ${names.join(',')}`);
  }
  return Object.fromEntries(session.inputNames.map((n, i) => [n, feeds[names[i]]]));
}

function outputsInOrder(session, result) {
  return session.outputNames.map((n) => ({name: n, tensor: result[n]}));
}

function compare(ref, got, rtol, atol) {
  const r = {max_abs_diff: 0, ref_max_abs: 0, max_rel_diff: 0, ok: true, detail: ''};
  const details = [];
  if (ref.length !== got.length) {
    return {...r, ok: false, max_abs_diff: Infinity, max_rel_diff: Infinity,
            detail: `${got.length} outputs, reference has ${ref.length}`};
  }
  const byName = got.every((g) => ref.some((x) => x.name === g.name));
  for (let k = 0; k < ref.length; k++) {
    const a = ref[k];
    const b = byName ? got.find((g) => g.name === a.name) : got[k];
    const sa = a.tensor.dims.join('x');
    const sb = b.tensor.dims.join('x');
    if (sa !== sb) {
      return {...r, ok: false, max_abs_diff: Infinity, max_rel_diff: Infinity,
              detail: `output ${a.name}: shape ${sb}, reference ${sa}`};
    }
    const x = a.tensor.data;
    const y = b.tensor.data;
    let maxRef = 0;
    let maxDiff = 0;
    for (let i = 0; i < x.length; i++) {
      const xi = Number(x[i]);
      const d = Math.abs(xi - Number(y[i]));
      if (Number.isNaN(d)) maxDiff = NaN;
      else if (d > maxDiff) maxDiff = d;
      const ax = Math.abs(xi);
      if (ax > maxRef) maxRef = ax;
    }
    // Relative to the output's scale (elementwise ratios blow up at values near zero).
    const rel = maxRef > 0 ? maxDiff / maxRef : maxDiff;
    const ok = maxDiff <= atol + rtol * maxRef;  // false for NaN
    if (!(maxDiff <= r.max_abs_diff)) r.max_abs_diff = maxDiff;
    if (!(rel <= r.max_rel_diff)) r.max_rel_diff = rel;
    r.ref_max_abs = Math.max(r.ref_max_abs, maxRef);
    if (!ok) {
      r.ok = false;
      details.push(`output ${a.name}: max|diff| ${maxDiff} > ${atol} + ${rtol} * ${maxRef}`);
    }
  }
  r.detail = details.join('; ');
  return r;
}

function summarize(times) {
  const s = [...times].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return {
    runs: n,
    median_ms: median,
    min_ms: s[0],
    mean_ms: s.reduce((a, b) => a + b, 0) / n,
    p90_ms: s[Math.min(n - 1, Math.ceil(0.9 * n) - 1)],
    total_ms: s.reduce((a, b) => a + b, 0),
  };
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

// One session on the cpu EP, sequential, with the given level and intra-op threads.
async function createSession(path, level, threads) {
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(path, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: level,
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  return {session, create_ms: nowMs() - t0};
}

// Runs every configuration's session (each {session, feeds, times: []}) `warmup` times untimed, then in
// rounds, each round starting one configuration later, until every configuration has at least minRuns
// runs and minSeconds of run time, or one reached maxRuns. Appends to c.times (ms). Each turn is a block
// of `block` runs (default 4) whose first is untimed, as the profiler's worker does (profiler/ort/
// worker.js): it refills the caches the other configurations evicted, so a model is timed warm, as the
// process serving it runs it, however large the models' weights are together.
async function timeInterleaved(configs, {warmup, minRuns, minSeconds, maxRuns, block = 4}) {
  const n = configs.length;
  const perTurn = n > 1 ? Math.max(1, Math.floor(block)) : 1;
  for (let w = 0; w < warmup; w++) {
    for (const c of configs) await c.session.run(c.feeds);
  }
  const load0 = os.loadavg()[0];
  const t0 = nowMs();
  let rounds = 0;
  const enough = (c) => c.times.length >= minRuns && c.times.reduce((a, b) => a + b, 0) >= minSeconds * 1000;
  while (!(configs.every(enough) || configs.some((c) => c.times.length >= maxRuns))) {
    for (let k = 0; k < n; k++) {
      const c = configs[(rounds + k) % n];
      for (let b = 0; b < perTurn; b++) {
        const s = nowMs();
        await c.session.run(c.feeds);
        if (perTurn === 1 || b > 0) c.times.push(nowMs() - s);
      }
    }
    rounds++;
  }
  return {rounds, block: perTurn, timed_wall_ms: nowMs() - t0, loadavg_1m: [load0, os.loadavg()[0]]};
}

// One session timed alone, as a user's process runs a model: `warmup` runs, then runs until `minRuns` and
// `minSeconds` of them or `maxRuns`. Above one intra-op thread, sessions alive side by side slow each other
// (each has a thread pool whose workers spin after a run): an unrolled LSTM cell against its merged candidate
// at 2 threads measured 0.92-2.66x pass by pass with both sessions alive, 1.98-2.17x one at a time.
async function timeAlone(c, {warmup, minRuns, minSeconds, maxRuns}) {
  for (let w = 0; w < warmup; w++) await c.session.run(c.feeds);
  const t0 = nowMs();
  let total = 0;
  while ((c.times.length < minRuns || total < minSeconds * 1000) && c.times.length < maxRuns) {
    const s = nowMs();
    await c.session.run(c.feeds);
    const ms = nowMs() - s;
    c.times.push(ms);
    total += ms;
  }
  return nowMs() - t0;
}

function machine() {
  const cpus = os.cpus();
  return {ort_version: ort.env.versions, execution_provider: 'cpu', cpus: cpus.length,
          cpu_model: cpus.length ? cpus[0].model : ''};
}

// JSON has no Infinity/NaN: write them as strings.
function toJson(report) {
  return JSON.stringify(report, (k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 1) + '\n';
}

// Numeric option parsing for the scripts' flags: a finite number >= 0, or usage(msg).
function numberFlag(usage, flag, v) {
  const x = Number(v);
  if (v === undefined || !Number.isFinite(x) || x < 0) usage(`${flag} needs a number`);
  return x;
}

module.exports = {makeFeeds, feedsFor, outputsInOrder, compare, summarize, nowMs, createSession, timeInterleaved,
                  timeAlone, machine, toJson, numberFlag};
