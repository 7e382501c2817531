#!/usr/bin/env node
// Speedups of candidate models over a base model in onnxruntime-node (cpu EP), measured as
// shared/notes/measuring.md says: every comparison is timed in several passes (4 by default), the order in
// which the two sessions are created alternating (the session created second tends to run faster), and
// the speedup is the geometric mean of the passes' ratios base median / candidate median. An A/A control (the base
// against itself, same method) is measured in the same run. Each candidate's outputs are checked
// against the base's on the same random input. Prints one JSON object on stdout.
//
//   node speedup.js [options] BASE.onnx [LABEL=CANDIDATE.onnx ...]
//     --level L          graphOptimizationLevel for every session (default all)
//     --threads N        intraOpNumThreads (default 1)
//     --warmup N --min-runs N --min-seconds S --max-runs N   per timed pair, as run.js (3, 20, 2, 1000)
//     --block N          runs per turn, the first untimed (default 4; ort_timing.js timeInterleaved)
//     --sessions S       together: both sessions of a pass alive, taking turns in blocks; one: each timed
//                        with its session the only one alive (ort_timing.js timeAlone), the first created
//                        first. Default: one above 1 thread (sessions alive side by side slow each other
//                        there), together at 1
//     --passes N         passes per pair, alternating which session is created first (even, default 4)
//     --seed N           input generator seed (default 1)
//     --rtol X --atol X  outputs match when max|a-b| <= atol + rtol * max|base| (1e-3, 1e-4)
// With no candidate only the control is measured.
// Exit 0 when all outputs match, 1 on a mismatch (the JSON is printed either way), 2 on bad usage,
// 3 when ONNX Runtime fails (load or run).
'use strict';

const t = require('./ort_timing');
const os = require('os');

function usage(msg) {
  process.stderr.write(`speedup.js: ${msg}\nusage: node speedup.js [--level all] [--threads N] [--warmup N] ` +
                       `[--min-runs N] [--min-seconds S] [--max-runs N] [--block N] [--sessions one|together] [--passes N] [--seed N] ` +
                       `[--rtol X] [--atol X] ` +
                       `BASE.onnx [LABEL=CANDIDATE.onnx ...]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {level: 'all', threads: 1, warmup: 3, minRuns: 20, minSeconds: 2, maxRuns: 1000, block: 4, sessions: '', passes: 4, seed: 1,
             rtol: 1e-3, atol: 1e-4, base: null, candidates: []};
  const num = (flag, v) => t.numberFlag(usage, flag, v);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--level': o.level = String(argv[++i] || ''); break;
      case '--threads': o.threads = num(a, argv[++i]); break;
      case '--warmup': o.warmup = num(a, argv[++i]); break;
      case '--min-runs': o.minRuns = num(a, argv[++i]); break;
      case '--min-seconds': o.minSeconds = num(a, argv[++i]); break;
      case '--max-runs': o.maxRuns = num(a, argv[++i]); break;
      case '--block': o.block = num(a, argv[++i]); break;
      case '--sessions': o.sessions = String(argv[++i] || ''); break;
      case '--passes': o.passes = num(a, argv[++i]); break;
      case '--seed': o.seed = num(a, argv[++i]); break;
      case '--rtol': o.rtol = num(a, argv[++i]); break;
      case '--atol': o.atol = num(a, argv[++i]); break;
      default: {
        if (a.startsWith('--')) usage(`unknown option ${a}`);
        if (o.base === null) {
          o.base = a;
          break;
        }
        const eq = a.indexOf('=');
        o.candidates.push({label: eq > 0 ? a.slice(0, eq) : `c${o.candidates.length}`,
                           path: eq > 0 ? a.slice(eq + 1) : a});
      }
    }
  }
  if (o.base === null) usage('give the base model');
  if (!o.level) usage('--level is empty');
  if (!(o.threads >= 1)) usage('--threads must be >= 1');
  if (!(o.maxRuns >= 1)) usage('--max-runs must be >= 1');
  if (!(o.passes >= 2 && o.passes % 2 === 0)) usage('--passes must be an even number >= 2 (both creation orders)');
  if (o.sessions === '') o.sessions = o.threads > 1 ? 'one' : 'together';
  if (!['one', 'together'].includes(o.sessions)) usage('--sessions must be one or together');
  return o;
}

// Times base against candidate in one order of session creation; `baseFirst` says which is created first.
async function timeOrder(o, basePath, candPath, feeds, baseFirst) {
  const order = baseFirst ? [['base', basePath], ['candidate', candPath]] : [['candidate', candPath], ['base', basePath]];
  const configs = [];
  const load0 = os.loadavg()[0];
  let timedWallMs = 0;
  for (const [role, path] of order) {
    const {session, create_ms} = await t.createSession(path, o.level, o.threads);
    const c = {role, path, session, create_ms, times: [], feeds: t.feedsFor(session, feeds)};
    configs.push(c);
    if (o.sessions === 'one') {
      timedWallMs += await t.timeAlone(c, o);
      await session.release();
    }
  }
  const timing = o.sessions === 'one'
                     ? {sessions: 'one', timed_wall_ms: timedWallMs, loadavg_1m: [load0, os.loadavg()[0]]}
                     : {sessions: 'together', ...(await t.timeInterleaved(configs, o))};
  if (o.sessions === 'together') {
    for (const c of configs) await c.session.release();
  }
  const by = Object.fromEntries(configs.map((c) => [c.role, {create_ms: c.create_ms, ...t.summarize(c.times)}]));
  return {created_first: baseFirst ? 'base' : 'candidate', ...timing, base: by.base, candidate: by.candidate,
          ratio: by.base.median_ms / by.candidate.median_ms};
}

// The pair in `o.passes` passes of alternating creation order, each with fresh sessions (where they land
// in memory moves a millisecond model by several percent): speedup = geometric mean of the passes' ratios
// (> 1: the candidate is faster).
async function timePair(o, basePath, candPath, feeds) {
  const orders = [];
  for (let p = 0; p < o.passes; p++) orders.push(await timeOrder(o, basePath, candPath, feeds, p % 2 === 0));
  const logMean = orders.reduce((a, r) => a + Math.log(r.ratio), 0) / orders.length;
  return {speedup: Math.exp(logMean), ratios: orders.map((r) => r.ratio), orders};
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  // The input and the reference outputs, from a session of the base that is released before timing.
  const ref = await t.createSession(o.base, o.level, o.threads);
  const {feeds, shapes} = t.makeFeeds(ref.session, o.seed);
  const refOut = t.outputsInOrder(ref.session, await ref.session.run(feeds));
  const checks = [];
  for (const c of o.candidates) {
    const {session} = await t.createSession(c.path, o.level, o.threads);
    const out = t.outputsInOrder(session, await session.run(t.feedsFor(session, feeds)));
    checks.push({label: c.label, path: c.path, ...t.compare(refOut, out, o.rtol, o.atol)});
    await session.release();
  }
  await ref.session.release();

  const control = await timePair(o, o.base, o.base, feeds);
  const candidates = [];
  for (const c of o.candidates) candidates.push({label: c.label, path: c.path, ...(await timePair(o, o.base, c.path, feeds))});

  const report = {
    ...t.machine(),
    method: `each pair timed in ${o.passes} passes of alternating session creation order, fresh sessions each; ` +
            'speedup = geometric mean of the passes\' ratios base median / candidate median; control = the base ' +
            'against itself',
    passes: o.passes,
    block: o.block,
    sessions: o.sessions,
    level: o.level,
    threads: o.threads,
    warmup: o.warmup,
    min_runs: o.minRuns,
    min_seconds: o.minSeconds,
    max_runs: o.maxRuns,
    base: o.base,
    inputs: shapes,
    seed: o.seed,
    rtol: o.rtol,
    atol: o.atol,
    control,
    candidates,
    checks,
    outputs_match: checks.every((c) => c.ok),
  };
  process.stdout.write(t.toJson(report));
  process.exitCode = report.outputs_match ? 0 : 1;
}

main().catch((e) => {
  process.stderr.write(`speedup.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(3);
});
