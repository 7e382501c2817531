#!/usr/bin/env node
// The profiler's ort backend (profiler/ort/ort_backend.h) times ONNX models in onnxruntime-node through this
// long-lived worker. Protocol: one JSON object per line on stdin, one answer per line on stdout, echoing
// the request's "id"; nothing else is written to stdout (ORT's own log goes to stderr).
//   node worker.js [PROFILE_DIR]    (ORT's kernel profiles go there; default a temporary directory)
//   {"id":1,"cmd":"hello"}
//     -> {"id":1,"ok":true,"ort_version":"1.30.0","node_version":"v20.20.2","cpu_model":"...","cpus":2}
//   {"id":2,"cmd":"time","models":["/tmp/a.onnx","/tmp/b.onnx"],"threads":1,"level":"all","warmup":8,
//    "min_runs":32,"max_runs":2000,"min_ms":50,"seed":1}
//    (optional: "one_session":true, "block":4)
//     -> {"id":2,"ok":true,"loadavg":[before,after],"results":[{"ok":true,"times_ms":[...],"kernels":["MatMul"],
//         "nodes":1,"create_ms":12.5}, {"ok":false,"error":"..."}]}
// "time" creates one session per model in the order given (cpu EP, sequential, intraOpNumThreads
// `threads`, graphOptimizationLevel `level`), runs each `warmup` times (and as often in a profiled
// session of its own first, to name the kernels ORT runs after its own graph rewrites), then times them
// interleaved, each round starting one model
// later, until every model has `min_runs` runs and the rounds `min_ms` of run time, or one model has
// `max_runs`. With several models each takes its turn as a block of "block" runs (default 4), the
// first untimed; with "one_session" each model's session is the only one alive while it runs
// (timeOneSessionAtATime). Inputs are deterministic normal floats (integers 0); outputs are written into the tensors
// the first run returned, so no run allocates its outputs. A model that cannot load or run fails alone.
//   {"id":3,"cmd":"compare","models":["/tmp/in.onnx","/tmp/out.onnx"],"threads":1,"level":"all","seed":1}
//     -> {"id":3,"ok":true,"results":[{"ok":true},
//         {"ok":true,"outputs":[{"name":"y","elements":64,"exact":false,"max_abs_error":2.4e-7,
//          "max_rel_error":1.1e-7,"differing":3,"nonfinite_mismatches":0,"worst_index":17,
//          "worst_reference":1.25,"worst_value":1.2500002}]}]}
// "compare" runs every model once on the same inputs, the first model's random feeds (seed `seed`, as
// "time" makes them; a later model must take inputs of the same names and types), in sessions as "time"
// creates them, and compares each later model's outputs with the first's, output by output in the first's
// order: the largest |b - a| and |b - a| / (1 + |a|) (a the first model's value: relative for large
// values, absolute near 0), how many elements differ at all, how many differ by no finite amount (one
// NaN, or infinities of opposite signs: in neither error figure), and the element with the largest
// relative error. Floating-point outputs are "exact":false; other types compare exactly. An output
// missing from a later model, of another type or shape, or only the later model's (listed last) has
// "mismatch" saying so instead. A model that cannot load or run fails alone ({"ok":false,"error":...});
// when the first fails, so do the others.
// A request that cannot be parsed is answered with {"ok":false,"error":...}. If onnxruntime-node is
// missing, every answer says so with "unavailable":true (install it with deploy/setup.sh: npm ci in
// profiler/ort).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

let ort = null;
let loadError = '';
try {
  ort = require('onnxruntime-node');
  ort.env.logLevel = 'error';
} catch (e) {
  loadError = `onnxruntime-node is not installed in ${__dirname} (${String(e.message).split('\n')[0]}); ` +
              'run deploy/setup.sh (npm ci in profiler/ort)';
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

const {randomFeeds} = require('./random_feeds');
const makeFeeds = (session, seed) => randomFeeds(ort, session, seed, 'the worker').feeds;

// Where ORT writes the kernel profiles: the directory the caller gives (it removes it even when this
// process is killed), else one of our own, removed at exit.
let sessionCounter = 0;
const givenDir = process.argv[2] || '';
const profileDir = givenDir || fs.mkdtempSync(path.join(os.tmpdir(), 'taso-ort-worker-'));
if (!givenDir) process.on('exit', () => fs.rmSync(profileDir, {recursive: true, force: true}));

// The op types ORT ran in the profiled runs, in first-run order ("com.microsoft.nchwc" kernels show
// as their op type, e.g. ReorderInput), and how many kernels ran in all.
function kernelsFromProfile(prefix) {
  const files = fs.readdirSync(profileDir).filter((f) => f.startsWith(`${path.basename(prefix)}_`));
  const names = [];
  let events = 0;
  for (const f of files) {
    const full = path.join(profileDir, f);
    try {
      for (const e of JSON.parse(fs.readFileSync(full, 'utf8'))) {
        if (e.cat !== 'Node' || !String(e.name).endsWith('_kernel_time') || !e.args) continue;
        events++;
        if (!names.includes(e.args.op_name)) names.push(e.args.op_name);
      }
    } catch (err) {
      // A profile we cannot read only costs the kernel names.
    }
    fs.rmSync(full, {force: true});
  }
  return {names, events};
}

// A session for `modelPath`; `profiled` ones write ORT's kernel profile under a unique prefix.
async function load(modelPath, r, profiled) {
  const prefix = path.join(profileDir, `p${process.pid}s${++sessionCounter}`);  // unique across restarts
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: r.level,
    intraOpNumThreads: r.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    enableProfiling: profiled,
    profileFilePrefix: prefix,
  });
  const c = {session, prefix, create_ms: nowMs() - t0, times: [], fetches: null};
  c.feeds = makeFeeds(session, r.seed);
  return c;
}

async function runOnce(c) {
  if (c.fetches === null) {
    const out = await c.session.run(c.feeds);
    c.fetches = {};
    for (const name of c.session.outputNames) c.fetches[name] = out[name];
    return;
  }
  await c.session.run(c.feeds, c.fetches);
}

async function time(r) {
  for (const k of ['threads', 'warmup', 'min_runs', 'max_runs', 'min_ms', 'seed']) {
    if (typeof r[k] !== 'number' || !(r[k] >= 0)) throw new Error(`"${k}" must be a number >= 0`);
  }
  if (!Array.isArray(r.models) || r.models.length === 0) throw new Error('"models" must list model files');
  if (typeof r.level !== 'string') throw new Error('"level" must be a graphOptimizationLevel');
  const results = r.models.map(() => ({ok: true}));
  // One session at a time: each turn creates its own, so none is created for the timing here.
  const oneSession = Boolean(r.one_session) && r.models.length > 1;
  const live = [];
  for (let i = 0; i < r.models.length; i++) {
    try {
      // The kernels ORT runs are named by a profiled session of their own: a session that has profiled
      // stays slower after endProfiling (NAS-RNN's cell, 230 nodes: 1.40 against 1.28 ms a run), more
      // so the more nodes it runs, which would favour candidates with fewer nodes.
      const named = await load(r.models[i], r, true);
      const profiled = Math.max(1, r.warmup);
      for (let w = 0; w < profiled; w++) await runOnce(named);
      named.session.endProfiling();
      const kernels = kernelsFromProfile(named.prefix);
      await named.session.release();
      results[i].kernels = kernels.names;
      results[i].nodes = Math.round(kernels.events / profiled);
      if (oneSession) {
        live.push({index: i, times: []});
        continue;
      }
      const c = await load(r.models[i], r, false);
      c.index = i;
      for (let w = 0; w < profiled; w++) await runOnce(c);
      results[i].create_ms = c.create_ms;
      live.push(c);
    } catch (e) {
      results[i] = {ok: false, error: String(e.message || e)};
    }
  }
  const load0 = os.loadavg()[0];
  if (oneSession) {
    await timeOneSessionAtATime(r, live, results);
    return {results, loadavg: [load0, os.loadavg()[0]]};
  }
  let rounds = 0;
  let elapsed = 0;
  // Several models take turns in blocks of runs, the first run of each block untimed: it refills the
  // caches the other models' runs evicted. Alternating run by run measured each model with its weights
  // evicted whenever the models' weights together outgrew the last-level cache (NAS-RNN's cell and a
  // candidate, 16.8 MB each on a 32 MiB L3: 1.97 ms a run interleaved, 1.12 ms alone), which is not
  // how a model runs in the process that serves it.
  const block = live.length > 1 ? Math.max(1, Math.floor(r.block || 4)) : 1;
  const enough = () => live.every((c) => c.times.length >= r.min_runs) && elapsed >= r.min_ms;
  while (live.length > 0 && !enough() && !live.some((c) => c.times.length >= Math.max(1, r.max_runs))) {
    for (let k = 0; k < live.length; k++) {
      const c = live[(rounds + k) % live.length];
      let failed = false;
      for (let b = 0; b < block; b++) {
        const s = nowMs();
        try {
          await c.session.run(c.feeds, c.fetches);
        } catch (e) {
          results[c.index] = {ok: false, error: String(e.message || e)};
          live.splice(live.indexOf(c), 1);
          failed = true;
          break;
        }
        const ms = nowMs() - s;
        if (block > 1 && b === 0) continue;
        c.times.push(ms);
        elapsed += ms;
      }
      if (failed) break;
    }
    rounds++;
  }
  for (const c of live) {
    results[c.index].times_ms = c.times;
    await c.session.release();
  }
  return {results, loadavg: [load0, os.loadavg()[0]]};
}

// "one_session": each model is timed in two turns, the models in order and then in reverse (A B B A, so a
// drift over the call cancels), each turn with the model's session the only one alive: created, warmed up,
// run, released. At more than one intra-op thread every session has a thread pool of its own whose
// workers spin after a run, so sessions alive side by side slow each other: chained 1x512 . 512x512
// matmuls at 2 threads cost 19-22 us each with one session alive and 35-42 us with five (1 thread: 37),
// while a user's process runs one model.
async function timeOneSessionAtATime(r, live, results) {
  const turns = [...live, ...[...live].reverse()];
  const share = (x) => Math.ceil(x / 2);
  for (const c of turns) {
    if (!results[c.index].ok) continue;
    let s = null;
    try {
      s = await load(r.models[c.index], r, false);
      if (results[c.index].create_ms === undefined) results[c.index].create_ms = s.create_ms;
      for (let w = 0; w < Math.max(1, r.warmup); w++) await runOnce(s);
      let elapsed = 0;
      let runs = 0;
      while ((runs < share(r.min_runs) || elapsed < r.min_ms / turns.length) && runs < Math.max(1, share(r.max_runs))) {
        const t0 = nowMs();
        await s.session.run(s.feeds, s.fetches);
        const ms = nowMs() - t0;
        c.times.push(ms);
        elapsed += ms;
        runs++;
      }
    } catch (e) {
      results[c.index] = {ok: false, error: String(e.message || e)};
    }
    if (s) await s.session.release();
  }
  for (const c of live) {
    if (results[c.index].ok) results[c.index].times_ms = c.times;
  }
}

// IEEE half-precision bits as a number (onnxruntime-node hands float16 data over as its bits).
function halfToNumber(h) {
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  const v = e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1 + m / 1024) * 2 ** (e - 15);
  return h & 0x8000 ? -v : v;
}

// One output of a later model against the first's (see "compare" above).
function compareOutput(name, a, b) {
  const out = {name, elements: a.data.length};
  if (!b) return {...out, mismatch: 'missing from this model'};
  if (a.type !== b.type) return {...out, mismatch: `element type ${b.type}, not ${a.type}`};
  if (a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i])) {
    return {...out, mismatch: `shape [${b.dims}], not [${a.dims}]`};
  }
  const exact = !['float32', 'float64', 'float16'].includes(a.type);
  const value = a.type === 'float16' && a.data instanceof Uint16Array ? halfToNumber : Number;
  Object.assign(out, {exact, max_abs_error: 0, max_rel_error: 0, differing: 0, nonfinite_mismatches: 0,
                      worst_index: 0});
  let worst = -1;
  for (let i = 0; i < a.data.length; i++) {
    const x = value(a.data[i]);
    const y = value(b.data[i]);
    if (exact ? a.data[i] === b.data[i] : x === y || (Number.isNaN(x) && Number.isNaN(y))) continue;
    out.differing++;
    const abs = Math.abs(y - x);
    // Only one NaN, or infinities of opposite signs: no error figure covers them (exact outputs never get here
    // with a finite error; strings have none).
    const rel = Number.isFinite(abs) ? abs / (1 + Math.abs(x)) : Infinity;
    if (Number.isFinite(abs)) {
      out.max_abs_error = Math.max(out.max_abs_error, abs);
      out.max_rel_error = Math.max(out.max_rel_error, rel);
    } else if (!exact) {
      out.nonfinite_mismatches++;
    }
    if (rel > worst) [worst, out.worst_index] = [rel, i];
  }
  // The worst element's values (NaN and infinities become null in JSON); element 0's when none differs.
  out.worst_reference = value(a.data[out.worst_index]);
  out.worst_value = value(b.data[out.worst_index]);
  return out;
}

async function compare(r) {
  if (typeof r.threads !== 'number' || !(r.threads >= 1)) throw new Error('"threads" must be a number >= 1');
  if (typeof r.seed !== 'number' || !(r.seed >= 0)) throw new Error('"seed" must be a number >= 0');
  if (!Array.isArray(r.models) || r.models.length === 0) throw new Error('"models" must list model files');
  if (typeof r.level !== 'string') throw new Error('"level" must be a graphOptimizationLevel');
  const options = {executionProviders: ['cpu'], graphOptimizationLevel: r.level, intraOpNumThreads: r.threads,
                   interOpNumThreads: 1, executionMode: 'sequential'};
  let feeds = null;
  let reference = null;  // the first model's outputs by name, in its order
  const results = [];
  for (let i = 0; i < r.models.length; i++) {
    if (i > 0 && reference === null) {
      results.push({ok: false, error: 'the first model did not run, so there is nothing to compare with'});
      continue;
    }
    let session = null;
    try {
      session = await ort.InferenceSession.create(r.models[i], options);
      if (i === 0) {
        feeds = makeFeeds(session, r.seed);
      } else {
        for (const m of session.inputMetadata) {
          const f = feeds[m.name];
          if (!f) throw new Error(`it takes an input ${m.name} the first model does not`);
          if (m.type !== f.type) throw new Error(`its input ${m.name} is ${m.type}, the first model's ${f.type}`);
        }
        if (session.inputNames.length !== Object.keys(feeds).length) {
          throw new Error(`it takes ${session.inputNames.length} inputs, the first model ${Object.keys(feeds).length}`);
        }
      }
      const out = await session.run(feeds);
      if (i === 0) {
        reference = session.outputNames.map((name) => [name, out[name]]);
        results.push({ok: true});
      } else {
        const outputs = reference.map(([name, a]) => compareOutput(name, a, out[name]));
        for (const name of session.outputNames.filter((n) => !reference.some(([m]) => m === n))) {
          outputs.push({name, elements: out[name].data.length, mismatch: 'not an output of the first model'});
        }
        results.push({ok: true, outputs});
      }
    } catch (e) {
      results.push({ok: false, error: String(e.message || e)});
    }
    if (session) await session.release();
  }
  return {results};
}

function hello() {
  const cpus = os.cpus();
  return {ort_version: ort.env.versions.node || ort.env.versions.common, node_version: process.version,
          cpu_model: cpus.length ? cpus[0].model.trim() : 'unknown cpu', cpus: cpus.length};
}

async function answer(line) {
  let id = null;
  try {
    const r = JSON.parse(line);
    id = r.id === undefined ? null : r.id;
    if (ort === null) return {id, ok: false, unavailable: true, error: loadError};
    if (r.cmd === 'hello') return {id, ok: true, ...hello()};
    if (r.cmd === 'time') return {id, ok: true, ...(await time(r))};
    if (r.cmd === 'compare') return {id, ok: true, ...(await compare(r))};
    return {id, ok: false, error: `unknown command ${JSON.stringify(r.cmd)} (hello, time or compare)`};
  } catch (e) {
    return {id, ok: false, error: String(e.message || e)};
  }
}

// One request at a time, in order: timings must not overlap.
const rl = readline.createInterface({input: process.stdin, terminal: false});
let queue = Promise.resolve();
rl.on('line', (line) => {
  if (!line.trim()) return;
  queue = queue.then(async () => process.stdout.write(JSON.stringify(await answer(line)) + '\n'));
});
rl.on('close', () => queue.then(() => process.exit(0)));
