// What a second intra-op thread buys small operators in ONNX Runtime, and how the way they are timed
// changes the answer. For each thread count, times chains of N 1x512 . 512x512 MatMuls (8 weights used in
// turn) and of N Tanh on 1x512, run back to back in one session, and reports the median run and the
// marginal cost per operator between the shortest and longest chain (the fixed cost of a run cancels).
// Each chain is timed twice: alone in the process, then interleaved in blocks of runs with the other
// chains' sessions alive, as a profiler that times several models in one process does.
//   node bench/ort/threads_probe.js [--threads "1 2"] [--lengths "8 64"] [--runs 1500] [--json]
// Models are written to a temporary directory by /usr/bin/python3 (onnx) and removed at the end.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {execFileSync} = require('child_process');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const o = {threads: [1, 2], lengths: [8, 64], runs: 1500, json: false};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const list = () => argv[++i].trim().split(/\s+/).map(Number);
    if (a === '--threads') o.threads = list();
    else if (a === '--lengths') o.lengths = list();
    else if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--json') o.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.lengths.length < 2 || o.threads.some((t) => !(t >= 1)) || !(o.runs >= 10)) {
    throw new Error('give at least two --lengths, --threads >= 1 and --runs >= 10');
  }
  o.lengths.sort((a, b) => a - b);
  return o;
}

const MAKE = `
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
op, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(1)
inits, nodes, prev = [], [], "x"
if op == "MatMul":
    inits = [numpy_helper.from_array((rng.standard_normal((512, 512)) / 23).astype(np.float32), "w%d" % i) for i in range(8)]
for i in range(n):
    nodes.append(helper.make_node(op, [prev, "w%d" % (i % 8)] if op == "MatMul" else [prev], ["y%d" % i]))
    prev = "y%d" % i
g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512])],
                      [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 512])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, out)
`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function open(file, threads) {
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential'});
  const feeds = {x: new ort.Tensor('float32', Float32Array.from({length: 512}, (_, i) => Math.sin(i)), [1, 512])};
  return {session, feeds};
}

async function timeRuns(s, runs) {
  const t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.session.run(s.feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return t;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taso-threads-probe-'));
  const results = [];
  try {
    const models = [];
    for (const op of ['MatMul', 'Tanh']) {
      for (const n of o.lengths) {
        const file = path.join(dir, `${op}${n}.onnx`);
        execFileSync('/usr/bin/python3', ['-c', MAKE, op, String(n), file]);
        models.push({op, n, file});
      }
    }
    for (const threads of o.threads) {
      // Alone: one session in the process at a time, runs back to back.
      for (const m of models) {
        const s = await open(m.file, threads);
        await timeRuns(s, 50);
        results.push({threads, op: m.op, n: m.n, mode: 'alone', median_ms: median(await timeRuns(s, o.runs))});
        await s.session.release();
      }
      // Interleaved: every chain's session alive, blocks of 16 runs in turn, the first of each untimed.
      const live = [];
      for (const m of models) live.push({m, s: await open(m.file, threads), t: []});
      for (let round = 0; round * 16 < o.runs; round++) {
        for (const c of live) {
          await c.s.session.run(c.s.feeds);
          c.t.push(...await timeRuns(c.s, 16));
        }
      }
      for (const c of live) {
        results.push({threads, op: c.m.op, n: c.m.n, mode: 'interleaved', median_ms: median(c.t)});
        await c.s.session.release();
      }
    }
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
  const lo = o.lengths[0], hi = o.lengths[o.lengths.length - 1];
  const marginal = [];
  for (const threads of o.threads) {
    for (const op of ['MatMul', 'Tanh']) {
      for (const mode of ['alone', 'interleaved']) {
        const at = (n) => results.find((r) => r.threads === threads && r.op === op && r.mode === mode && r.n === n);
        marginal.push({threads, op, mode, per_op_ms: (at(hi).median_ms - at(lo).median_ms) / (hi - lo),
                       short_per_op_ms: at(lo).median_ms / lo});
      }
    }
  }
  if (o.json) {
    console.log(JSON.stringify({ort_version: ort.env.versions, cpus: os.cpus().length, runs: o.runs, results, marginal},
                               null, 1));
    return;
  }
  for (const r of results) {
    console.log(`${r.threads}t ${r.mode.padEnd(11)} ${r.op.padEnd(6)} x${String(r.n).padEnd(3)} median ${r.median_ms.toFixed(4)} ms`);
  }
  for (const m of marginal) {
    console.log(`${m.threads}t ${m.mode.padEnd(11)} ${m.op.padEnd(6)} per operator ${m.per_op_ms.toFixed(4)} ms ` +
                `(x${hi} - x${lo}); x${lo} / ${lo}: ${m.short_per_op_ms.toFixed(4)} ms`);
  }
}

main().catch((e) => {
  console.error(`threads_probe.js: ${e.message}`);
  process.exit(1);
});
