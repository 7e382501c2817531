#!/usr/bin/env node
// Runs ONNX models in ONNX Runtime and compares their outputs, for the tests:
//   node ort_compare.js [--ort DIR] [--tolerance T] [--seed S] [--level L] IN.onnx [OUT.onnx]
// One model: it loads and runs. Two: both run on the same deterministic random inputs (IN's, made by
// profiler/ort/random_feeds.js as the profiler's worker makes them: normal floats, integers 0,
// symbolic dimensions 1), and every output of IN must come out of OUT with the same type and shape
// and a largest |out - in| / (1 + |in|) of at most T (default 1e-4: float32 arithmetic reordered by
// fusion and folding, not a changed value); other element types must be equal.
// DIR holds random_feeds.js and node_modules/onnxruntime-node (default: the repository's
// profiler/ort, installed by deploy/setup.sh); L is ORT's graphOptimizationLevel (default all, as
// users run). Prints one line per model and output. Exit 0 when all agree, 1 when a model fails to
// load or run or an output disagrees, 2 for bad arguments, 3 when onnxruntime-node is missing.
'use strict';

const path = require('path');

function usage(message) {
  process.stderr.write(`ort_compare.js: ${message}\nusage: ort_compare.js [--ort DIR] [--tolerance T] [--seed S] ` +
                       '[--level L] IN.onnx [OUT.onnx]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const o = {ort: path.join(__dirname, '..', '..', 'profiler', 'ort'), tolerance: 1e-4, seed: 1, level: 'all',
             models: []};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (['--ort', '--tolerance', '--seed', '--level'].includes(a)) {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      const v = argv[++i];
      const key = a.slice(2);
      if (key === 'ort' || key === 'level') {
        o[key] = v;
      } else {
        o[key] = Number(v);
        if (!(o[key] >= 0)) usage(`${a}: '${v}' is not a number >= 0`);
      }
    } else if (a.startsWith('--')) {
      usage(`unknown flag ${a}`);
    } else {
      o.models.push(a);
    }
  }
  if (o.models.length < 1 || o.models.length > 2) usage('give one or two models');
  return o;
}

// One output of OUT against IN's: '' when they agree, else why not, and the error figures.
function compareOutput(a, b, tolerance) {
  if (!b) return {problem: 'missing from the second model'};
  if (a.type !== b.type) return {problem: `element type ${b.type}, not ${a.type}`};
  if (a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i])) {
    return {problem: `shape [${b.dims}], not [${a.dims}]`};
  }
  const floating = a.type === 'float32' || a.type === 'float64';
  let maxAbs = 0;
  let maxRel = 0;
  let worst = 0;
  let differing = 0;
  let nonfinite = 0;
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i];
    const y = b.data[i];
    if (x === y || (floating && Number.isNaN(x) && Number.isNaN(y))) continue;
    differing++;
    if (!floating) continue;
    const abs = Math.abs(y - x);
    if (!Number.isFinite(abs)) {  // one NaN, or infinities of opposite signs
      nonfinite++;
      continue;
    }
    maxAbs = Math.max(maxAbs, abs);
    const rel = abs / (1 + Math.abs(x));
    if (rel > maxRel) [maxRel, worst] = [rel, i];
  }
  const figures = {maxAbs, maxRel, elements: a.data.length};
  let problem = '';
  if (!floating && differing) problem = `${differing} of ${a.data.length} elements differ (${a.type})`;
  else if (nonfinite) problem = `${nonfinite} elements differ by no finite amount (NaN or infinity)`;
  else if (maxRel > tolerance) {
    problem = `max |diff| ${maxAbs.toExponential(2)}, relative ${maxRel.toExponential(2)} > ${tolerance} ` +
              `(element ${worst}: ${b.data[worst]} for ${a.data[worst]})`;
  }
  return {problem, ...figures};
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let ort;
  let randomFeeds;
  try {
    ort = require(require.resolve('onnxruntime-node', {paths: [o.ort]}));
    ort.env.logLevel = 'error';
    ({randomFeeds} = require(path.resolve(o.ort, 'random_feeds')));
  } catch (e) {
    process.stderr.write(`ort_compare.js: onnxruntime-node or random_feeds.js is not in ${o.ort} ` +
                         `(${String(e.message).split('\n')[0]}); run deploy/setup.sh (npm ci in profiler/ort)\n`);
    return 3;
  }
  const options = {executionProviders: ['cpu'], graphOptimizationLevel: o.level, intraOpNumThreads: 1,
                   interOpNumThreads: 1, executionMode: 'sequential'};
  let feeds = null;
  let reference = null;
  let failed = false;
  for (const model of o.models) {
    let out;
    let session;
    try {
      session = await ort.InferenceSession.create(model, options);
      if (feeds === null) {
        feeds = randomFeeds(ort, session, o.seed, 'ort_compare.js').feeds;
      } else if (session.inputNames.length !== Object.keys(feeds).length ||
                 session.inputNames.some((n) => !(n in feeds))) {
        throw new Error(`its inputs ${session.inputNames} are not the first model's ${Object.keys(feeds)}`);
      }
      out = await session.run(feeds);
    } catch (e) {
      console.log(`${model}: does not run in ONNX Runtime: ${String(e.message || e).split('\n')[0]}`);
      return 1;
    }
    if (reference === null) {
      reference = session.outputNames.map((name) => [name, out[name]]);
      console.log(`${model}: runs in ONNX Runtime`);
      continue;
    }
    for (const [name, a] of reference) {
      const c = compareOutput(a, out[name], o.tolerance);
      failed = failed || c.problem !== '';
      console.log(c.problem ? `output ${name}: ${c.problem}: DISAGREE` :
                              `output ${name}: max |diff| ${c.maxAbs.toExponential(2)}, relative ` +
                              `${c.maxRel.toExponential(2)} (${c.elements} elements): agree`);
    }
    for (const name of session.outputNames.filter((n) => !reference.some(([m]) => m === n))) {
      console.log(`output ${name}: not an output of the first model: DISAGREE`);
      failed = true;
    }
  }
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code));
