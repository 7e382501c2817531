// What the ORT timing scripts share (run.js, speedup.js): deterministic random
// inputs, session creation, the output check, and interleaved timing with
// summaries. Nothing here prints.
'use strict';

const os = require('os');
const ort = require('onnxruntime-node');

// Deterministic inputs: mulberry32 + Box-Muller, standard normal floats.
function normalSource(seed) {
  let s = (seed >>> 0) || 1;
  const uniform = () => {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

const TYPED = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array, int8: Int8Array,
  uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
};

function makeFeeds(session, seed) {
  const next = normalSource(seed);
  const feeds = {};
  const shapes = {};
  for (const m of session.inputMetadata) {
    if (!m.isTensor) throw new Error(`input ${m.name} is not a tensor`);
    const Typed = TYPED[m.type];
    if (!Typed) throw new Error(`input ${m.name} has type ${m.type}, which run.js does not generate`);
    // Symbolic or unknown dimensions (batch) become 1.
    const dims = m.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1));
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Typed(n);
    if (m.type === 'float32' || m.type === 'float64') {
      for (let i = 0; i < n; i++) data[i] = next();
    }  // integer inputs stay 0 (index-like inputs are not generated)
    feeds[m.name] = new ort.Tensor(m.type, data, dims);
    shapes[m.name] = dims;
  }
  return {feeds, shapes};
}

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
// runs and minSeconds of run time, or one reached maxRuns. Appends to c.times (ms).
async function timeInterleaved(configs, {warmup, minRuns, minSeconds, maxRuns}) {
  const n = configs.length;
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
      const s = nowMs();
      await c.session.run(c.feeds);
      c.times.push(nowMs() - s);
    }
    rounds++;
  }
  return {rounds, timed_wall_ms: nowMs() - t0, loadavg_1m: [load0, os.loadavg()[0]]};
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
                  machine, toJson, numberFlag};
