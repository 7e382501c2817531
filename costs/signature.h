// What the profiler measures: one operator applied to inputs of given types.
// A signature is canonicalised before it is measured or cached, so that two
// requests that run the same kernel share one measurement: split records on
// inputs are dropped (they never change the work done), and a split that
// undoes a recorded concat gets its part sizes spelled out.
#ifndef TASO_COSTS_SIGNATURE_H_
#define TASO_COSTS_SIGNATURE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/op.h"
#include "core/tensor_type.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

struct Signature {
  OpKind kind = OpKind::kRelu;
  OpParams params;
  std::vector<TensorType> inputs;
  // Opaque operators only: the operands the model holds as constants, by
  // input index, with their values where CarriesValue says (shapes, axes,
  // indices, exponents: Expand to another shape, or Pow by another exponent,
  // is other work), else "" (the measured model gives them values of its
  // own). Part of the key: a runtime also treats a constant operand
  // differently (it folds shapes, pre-packs a GRU's weights). IR operators'
  // kernels do not read values; Canonicalize drops any.
  std::map<int, std::string> constant_inputs;
};

// Element size in bytes (bool 1, float16 2, int64 8, others 4).
int64_t ElementBytes(DType dtype);

// Whether a constant operand of this type has its value in a signature: an
// integer or boolean tensor of at most kMaxCarriedElements elements, or a
// floating-point scalar. Larger constants are data whose values do not
// change the work (a weight, a bias), and would make every layer's
// signature its own.
inline constexpr int64_t kMaxCarriedElements = 64;
bool CarriesValue(const TensorType& type);

// Records input `input` of an opaque signature as a constant holding `data`
// (a weight's bytes, or null when it has none: then it is only marked).
void AddConstantOperand(Signature& signature, int input, const std::shared_ptr<const std::string>& data);

// What `node` of `graph` does as a signature: kind, parameters, input types,
// and for an opaque operator the operands that are weights.
Signature NodeSignature(const Graph& graph, const Node& node);

// A validated, canonical signature with its inferred outputs.
struct CanonicalSignature {
  Signature op;
  std::vector<TensorType> outputs;
  // Stable text that identifies the work, e.g.
  // "conv2d[stride=1x1,pad=same,act=relu](f32[1,64,56,56],f32[64,64,3,3])".
  // Equal keys run the same kernel on the same layouts. Part of cache keys.
  // An opaque operator's constant operands follow their types:
  // "(f32[1,32],i64[1]=[1])", "(f32[4,1,16],f32[1,96,16]=const,...)".
  std::string key;
};

// Checks the signature (known operator, legal parameters, shapes that infer,
// constant operands of their inputs' sizes) and canonicalises it.
// InvalidArgument names what is wrong, e.g.
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

#endif  // TASO_COSTS_SIGNATURE_H_
