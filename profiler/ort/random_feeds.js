'use strict';
// Deterministic random inputs for an ONNX Runtime session, shared by the
// profiler's worker and bench/ort (which requires this file), so both time
// models on the same values.

// Standard normal floats from a seed: mulberry32 + Box-Muller.
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
  bool: Uint8Array, float16: Uint16Array,  // float16 as its bits (zeros)
};

// Feeds for every input of `session` (tensors of the caller's onnxruntime
// module `ort`): floats drawn from `seed`, integers left 0 (index-like inputs
// are not generated), symbolic or unknown dimensions (batch) taken as 1.
// Returns {feeds, shapes}; `who` names the caller in errors.
function randomFeeds(ort, session, seed, who) {
  const next = normalSource(seed);
  const feeds = {};
  const shapes = {};
  for (const m of session.inputMetadata) {
    if (!m.isTensor) throw new Error(`input ${m.name} is not a tensor`);
    const Typed = TYPED[m.type];
    if (!Typed) throw new Error(`input ${m.name} has element type ${m.type}, which ${who} does not generate`);
    const dims = m.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1));
    const data = new Typed(dims.reduce((a, b) => a * b, 1));
    if (m.type === 'float32' || m.type === 'float64') {
      for (let i = 0; i < data.length; i++) data[i] = next();
    }
    feeds[m.name] = new ort.Tensor(m.type, data, dims);
    shapes[m.name] = dims;
  }
  return {feeds, shapes};
}

module.exports = {randomFeeds};
