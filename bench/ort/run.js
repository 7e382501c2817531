#!/usr/bin/env node
// Times ONNX models in onnxruntime-node (cpu EP) at several graph optimization
// levels, interleaved round-robin so machine noise hits every configuration
// alike, and checks that every model gives the first model's outputs on the
// same random input. Prints one JSON object on stdout (bench/ort_compare.sh
// formats it).
//
//   node run.js [options] LABEL=MODEL.onnx [LABEL=MODEL.onnx ...]
//     --levels L1,L2     graphOptimizationLevel per model: disabled|basic|extended|layout|all
//                        (default disabled,all)
//     --threads N        intraOpNumThreads (default 2)
//     --warmup N         untimed runs per configuration first (default 3)
//     --min-runs N       timed runs per configuration, at least (default 20)
//     --min-seconds S    and at least this much timed run time per configuration (default 2)
//     --max-runs N       stop at this many runs per configuration all the same (default 1000)
//     --seed N           input generator seed (default 1)
//     --rtol X --atol X  outputs match when max|a-b| <= atol + rtol * max|reference| (1e-3, 1e-4)
// The reference for the output check is the first model at the first level.
// Exit 0 when all outputs match, 1 on a mismatch (the JSON is printed either way), 2 on bad usage,
// 3 when ONNX Runtime fails (load or run).
'use strict';

const os = require('os');
const ort = require('onnxruntime-node');

function usage(msg) {
  process.stderr.write(`run.js: ${msg}\nusage: node run.js [--levels disabled,all] [--threads N] [--warmup N] ` +
                       `[--min-runs N] [--min-seconds S] [--max-runs N] [--seed N] [--rtol X] [--atol X] ` +
                       `LABEL=MODEL.onnx ...\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {levels: ['disabled', 'all'], threads: 2, warmup: 3, minRuns: 20, minSeconds: 2, maxRuns: 1000, seed: 1,
             rtol: 1e-3, atol: 1e-4, models: []};
  const num = (flag, v) => {
    const x = Number(v);
    if (v === undefined || !Number.isFinite(x) || x < 0) usage(`${flag} needs a number`);
    return x;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--levels': o.levels = String(argv[++i] || '').split(',').filter(Boolean); break;
      case '--threads': o.threads = num(a, argv[++i]); break;
      case '--warmup': o.warmup = num(a, argv[++i]); break;
      case '--min-runs': o.minRuns = num(a, argv[++i]); break;
      case '--min-seconds': o.minSeconds = num(a, argv[++i]); break;
      case '--max-runs': o.maxRuns = num(a, argv[++i]); break;
      case '--seed': o.seed = num(a, argv[++i]); break;
      case '--rtol': o.rtol = num(a, argv[++i]); break;
      case '--atol': o.atol = num(a, argv[++i]); break;
      default: {
        if (a.startsWith('--')) usage(`unknown option ${a}`);
        const eq = a.indexOf('=');
        const label = eq > 0 ? a.slice(0, eq) : `m${o.models.length}`;
        o.models.push({label, path: eq > 0 ? a.slice(eq + 1) : a});
      }
    }
  }
  if (!o.models.length) usage('give at least one model');
  if (!o.levels.length) usage('--levels is empty');
  if (!(o.threads >= 1)) usage('--threads must be >= 1');
  if (!(o.maxRuns >= 1)) usage('--max-runs must be >= 1');
  return o;
}

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

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const configs = [];
  for (const m of o.models) {
    for (const level of o.levels) {
      const t0 = nowMs();
      const session = await ort.InferenceSession.create(m.path, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: level,
        intraOpNumThreads: o.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
      });
      configs.push({name: `${m.label}/${level}`, model: m.label, path: m.path, level, session,
                    create_ms: nowMs() - t0, times: []});
    }
  }

  // Output check first, on its own input (seed), every configuration against the reference.
  const ref = configs[0];
  const {feeds, shapes} = makeFeeds(ref.session, o.seed);
  const refOut = outputsInOrder(ref.session, await ref.session.run(feeds));
  const checks = [];
  for (const c of configs.slice(1)) {
    c.feeds = feedsFor(c.session, feeds);
    const out = outputsInOrder(c.session, await c.session.run(c.feeds));
    checks.push({config: c.name, against: ref.name, ...compare(refOut, out, o.rtol, o.atol)});
  }
  ref.feeds = feeds;

  // Warm-up, then timed rounds; each round starts one configuration later.
  const n = configs.length;
  for (let w = 0; w < o.warmup; w++) {
    for (const c of configs) await c.session.run(c.feeds);
  }
  const load0 = os.loadavg()[0];
  const t0 = nowMs();
  let rounds = 0;
  const enough = (c) => c.times.length >= o.minRuns &&
                        c.times.reduce((a, b) => a + b, 0) >= o.minSeconds * 1000;
  while (!(configs.every(enough) || configs.some((c) => c.times.length >= o.maxRuns))) {
    for (let k = 0; k < n; k++) {
      const c = configs[(rounds + k) % n];
      const s = nowMs();
      await c.session.run(c.feeds);
      c.times.push(nowMs() - s);
    }
    rounds++;
  }
  const wall = nowMs() - t0;
  const load1 = os.loadavg()[0];
  for (const c of configs) await c.session.release();

  const cpus = os.cpus();
  const report = {
    ort_version: ort.env.versions,
    execution_provider: 'cpu',
    threads: o.threads,
    levels: o.levels,
    warmup: o.warmup,
    rounds,
    interleaved: true,
    timed_wall_ms: wall,
    loadavg_1m: [load0, load1],
    cpus: cpus.length,
    cpu_model: cpus.length ? cpus[0].model : '',
    inputs: shapes,
    seed: o.seed,
    rtol: o.rtol,
    atol: o.atol,
    configs: configs.map((c) => ({name: c.name, model: c.model, path: c.path, level: c.level,
                                  create_ms: c.create_ms, ...summarize(c.times)})),
    checks,
    outputs_match: checks.every((c) => c.ok),
  };
  // JSON has no Infinity/NaN: write them as strings.
  process.stdout.write(JSON.stringify(report, (k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v),
                                      1) + '\n');
  process.exitCode = report.outputs_match ? 0 : 1;
}

main().catch((e) => {
  process.stderr.write(`run.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(3);
});
