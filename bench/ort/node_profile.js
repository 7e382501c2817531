#!/usr/bin/env node
// Where the time goes in one model as ONNX Runtime runs it (cpu EP): each node of the graph ORT executes
// (after its own rewrites: the names say which fusions made a node) with the median of its kernel
// times from ORT's profiler, its share of their sum, and the totals per operator type.
//
//   node node_profile.js [--threads N] [--level L] [--runs N] [--warmup N] [--seed N] [--json] MODEL.onnx
//
// Defaults: 1 thread, level all, 20 timed runs after 3 untimed. Inputs are the deterministic random
// feeds speedup.js uses. The kernel times leave out what runs between kernels, so their sum is below a
// run's wall time; compare models with speedup.js, and use this to see why they differ.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');
const t = require('./ort_timing');

function usage(msg) {
  process.stderr.write(`node_profile.js: ${msg}\nusage: node node_profile.js [--threads N] [--level L] [--runs N] ` +
                       `[--warmup N] [--seed N] [--json] MODEL.onnx\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = {threads: 1, level: 'all', runs: 20, warmup: 3, seed: 1, json: false, model: null};
  const num = (flag, v) => t.numberFlag(usage, flag, v);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--threads': o.threads = num(a, argv[++i]); break;
      case '--level': o.level = String(argv[++i] || ''); break;
      case '--runs': o.runs = num(a, argv[++i]); break;
      case '--warmup': o.warmup = num(a, argv[++i]); break;
      case '--seed': o.seed = num(a, argv[++i]); break;
      case '--json': o.json = true; break;
      default:
        if (a.startsWith('--')) usage(`unknown option ${a}`);
        if (o.model !== null) usage('one model only');
        o.model = a;
    }
  }
  if (o.model === null) usage('no model');
  if (o.runs < 1) usage('--runs must be at least 1');
  return o;
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-profile-'));
  try {
    // One session, profiled from its first run; the warm-up runs' kernel times are dropped below.
    const profiled = await ort.InferenceSession.create(o.model, {
      executionProviders: ['cpu'], graphOptimizationLevel: o.level, intraOpNumThreads: o.threads,
      interOpNumThreads: 1, executionMode: 'sequential', enableProfiling: true,
      profileFilePrefix: path.join(dir, 'profile'),
    });
    const {feeds} = t.makeFeeds(profiled, o.seed);
    for (let i = 0; i < o.warmup + o.runs; i++) await profiled.run(feeds);
    profiled.endProfiling();
    await profiled.release();
    const files = fs.readdirSync(dir).filter((f) => f.startsWith('profile'));
    if (files.length !== 1) throw new Error(`ONNX Runtime wrote ${files.length} profiles`);
    const events = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
    const nodes = new Map();
    for (const e of events) {
      if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
      const name = e.name.slice(0, -'_kernel_time'.length);
      if (!nodes.has(name)) nodes.set(name, {node: name, op: e.args.op_name, us: []});
      nodes.get(name).us.push(e.dur);
    }
    // The warm-up runs come first: keep each node's last o.runs kernel times.
    const rows = [...nodes.values()].map((n) => ({node: n.node, op: n.op, median_us: median(n.us.slice(-o.runs))}));
    rows.sort((a, b) => b.median_us - a.median_us);
    const total = rows.reduce((s, r) => s + r.median_us, 0);
    const byOp = {};
    for (const r of rows) byOp[r.op] = (byOp[r.op] || 0) + r.median_us;
    const report = {model: o.model, ort_version: ort.env.versions.common, threads: o.threads, level: o.level,
                    runs: o.runs, ...t.machine(), kernel_sum_us: total,
                    by_op: Object.entries(byOp).sort((a, b) => b[1] - a[1]).map(([op, us]) => ({op, us})), nodes: rows};
    if (o.json) {
      process.stdout.write(t.toJson(report));
      return;
    }
    const pct = (us) => `${(100 * us / total).toFixed(1).padStart(5)} %`;
    console.log(`${o.model}: ${o.threads} thread(s), level ${o.level}, median of ${o.runs} runs; kernels sum to ` +
                `${(total / 1000).toFixed(2)} ms`);
    for (const r of rows) console.log(`  ${r.op.padEnd(20)} ${r.node.padEnd(56)} ${r.median_us.toFixed(0).padStart(8)} us ${pct(r.median_us)}`);
    console.log('  by operator type:');
    for (const {op, us} of report.by_op) console.log(`  ${op.padEnd(20)} ${us.toFixed(0).padStart(8)} us ${pct(us)}`);
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
}

main().catch((e) => {
  process.stderr.write(`node_profile.js: ${e.message}\n`);
  process.exit(3);
});
