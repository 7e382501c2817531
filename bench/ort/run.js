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
//     --block N          runs per turn, the first untimed (default 4; ort_timing.js timeInterleaved)
//     --seed N           input generator seed (default 1)
//     --rtol X --atol X  outputs match when max|a-b| <= atol + rtol * max|reference| (1e-3, 1e-4)
// The reference for the output check is the first model at the first level.
// Exit 0 when all outputs match, 1 on a mismatch (the JSON is printed either way), 2 on bad usage,
// 3 when ONNX Runtime fails (load or run).
'use strict';

const t = require('./ort_timing');

function usage(msg) {
  process.stderr.write(`run.js: ${msg}\nusage: node run.js [--levels disabled,all] [--threads N] [--warmup N] ` +
                       `[--min-runs N] [--min-seconds S] [--max-runs N] [--block N] [--seed N] [--rtol X] [--atol X] ` +
                       `LABEL=MODEL.onnx ...\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {levels: ['disabled', 'all'], threads: 2, warmup: 3, minRuns: 20, minSeconds: 2, maxRuns: 1000, block: 4,
             seed: 1,
             rtol: 1e-3, atol: 1e-4, models: []};
  const num = (flag, v) => t.numberFlag(usage, flag, v);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--levels': o.levels = String(argv[++i] || '').split(',').filter(Boolean); break;
      case '--threads': o.threads = num(a, argv[++i]); break;
      case '--warmup': o.warmup = num(a, argv[++i]); break;
      case '--min-runs': o.minRuns = num(a, argv[++i]); break;
      case '--min-seconds': o.minSeconds = num(a, argv[++i]); break;
      case '--max-runs': o.maxRuns = num(a, argv[++i]); break;
      case '--block': o.block = num(a, argv[++i]); break;
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

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const configs = [];
  for (const m of o.models) {
    for (const level of o.levels) {
      const {session, create_ms} = await t.createSession(m.path, level, o.threads);
      configs.push({name: `${m.label}/${level}`, model: m.label, path: m.path, level, session, create_ms, times: []});
    }
  }

  // Output check first, on its own input (seed), every configuration against the reference.
  const ref = configs[0];
  const {feeds, shapes} = t.makeFeeds(ref.session, o.seed);
  const refOut = t.outputsInOrder(ref.session, await ref.session.run(feeds));
  const checks = [];
  for (const c of configs.slice(1)) {
    c.feeds = t.feedsFor(c.session, feeds);
    const out = t.outputsInOrder(c.session, await c.session.run(c.feeds));
    checks.push({config: c.name, against: ref.name, ...t.compare(refOut, out, o.rtol, o.atol)});
  }
  ref.feeds = feeds;

  const timing = await t.timeInterleaved(configs, o);
  for (const c of configs) await c.session.release();

  const report = {
    ...t.machine(),
    threads: o.threads,
    levels: o.levels,
    warmup: o.warmup,
    rounds: timing.rounds,
    interleaved: true,
    timed_wall_ms: timing.timed_wall_ms,
    loadavg_1m: timing.loadavg_1m,
    inputs: shapes,
    seed: o.seed,
    rtol: o.rtol,
    atol: o.atol,
    configs: configs.map((c) => ({name: c.name, model: c.model, path: c.path, level: c.level,
                                  create_ms: c.create_ms, ...t.summarize(c.times)})),
    checks,
    outputs_match: checks.every((c) => c.ok),
  };
  process.stdout.write(t.toJson(report));
  process.exitCode = report.outputs_match ? 0 : 1;
}

main().catch((e) => {
  process.stderr.write(`run.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(3);
});
