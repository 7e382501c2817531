// What the profiler measures: one operator applied to inputs of given types.
// A signature is canonicalised before it is measured or cached, so that two
// requests that run the same kernel share one measurement: split records on
// inputs are dropped (they never change the work done), and a split that
// undoes a recorded concat gets its part sizes spelled out.
#ifndef TASO_PROFILER_SIGNATURE_H_
#define TASO_PROFILER_SIGNATURE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "core/tensor_type.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

struct Signature {
  OpKind kind = OpKind::kRelu;
  OpParams params;
  std::vector<TensorType> inputs;
};

// A validated, canonical signature with its inferred outputs.
struct CanonicalSignature {
  Signature op;
  std::vector<TensorType> outputs;
  // Stable text that identifies the work, e.g.
  // "conv2d[stride=1x1,pad=same,act=relu](f32[1,64,56,56],f32[64,64,3,3])".
  // Equal keys run the same kernel on the same layouts. Part of cache keys.
  std::string key;
};

// Checks the signature (known operator, legal parameters, shapes that infer)
// and canonicalises it. InvalidArgument names what is wrong, e.g.
// "conv2d: input has 3 channels, not a multiple of the weight's 2 ...".
// Graph inputs and weights are data, not operators: InvalidArgument.
absl::StatusOr<CanonicalSignature> Canonicalize(const Signature& signature);

// Operators that do no work at run time (IsLoadTimeConstant, core/op.h)
// cost 0 on every backend.

// The proto's OpSignature is the wire form; errors say which field is bad.
absl::StatusOr<Signature> SignatureFromProto(const OpSignature& proto);
OpSignature SignatureToProto(const Signature& signature);

// Total bytes of the inputs and outputs, and floating-point operations of the
// signature (multiply-add counts 2; a conv2d bias adds 1 per output
// element). Used by the analytic backend and to
// size the timing loop.
int64_t SignatureBytes(const CanonicalSignature& signature);
int64_t SignatureFlops(const CanonicalSignature& signature);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_SIGNATURE_H_
