// The ONNX model the ort backend times an opaque operator as: the operator
// alone, as the model it came from runs it. The node is rebuilt from the
// signature (op_type, domain, attributes, the input and output slots with
// their gaps, at the model's opset version); its inputs are typed from the
// signature, any element type; its outputs from the operator's output types.
//
// Operands the model holds as constants are initializers, as in the model:
// with their own values where the signature carries them (shapes, axes,
// indices, exponents), else with deterministic ones (each copy its own, as
// for an IR operator's weights: ort_model.h). An operand without a value
// that the operator's output shape determines (Expand's shape, Pad's pads,
// Slice's bounds, Resize's scales: what a runtime folds from shape
// arithmetic at load; opaque_operands.h) is an initializer with that value.
// Every other operand is a graph input, which the worker fills with normal
// floats, or integer and boolean zeros.
#ifndef TASO_PROFILER_ORT_ORT_OPAQUE_MODEL_H_
#define TASO_PROFILER_ORT_ORT_OPAQUE_MODEL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "costs/signature.h"

namespace taso::profiler {

// The opset an opaque operator imported without one (OpaqueInfo::opset 0)
// is run at: the newest the ONNX library we link knows, and PyTorch's export
// default since 2.0.
inline constexpr int64_t kAssumedOpaqueOpset = 17;

// A model of one operator, with what the run-overhead probe needs to match it.
struct OneOperatorModel {
  std::string onnx;  // a serialized onnx.ModelProto
  int graph_inputs = 0;
  int graph_outputs = 0;
  int operators = 1;  // operator nodes timed together: the time is per one of them
};

// `nodes` nodes (at least `copies`, at least 1) that read the same graph
// inputs, node k with the large constants of copy k % copies, each with its
// own graph outputs (SignatureGraph's layout, ort_model.h). UNIMPLEMENTED, saying why,
// for what cannot run alone: an operator with a subgraph (If, Loop, Scan), one
// reading a constant the IR cannot hold, an output of unknown element type.
absl::StatusOr<OneOperatorModel> OpaqueTimingModel(const CanonicalSignature& signature, int copies = 1,
                                                   int nodes = 0);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_ORT_OPAQUE_MODEL_H_
