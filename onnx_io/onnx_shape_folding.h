// Folds the integer shape arithmetic that exporters emit (PyTorch's
// Shape→Gather→Div→Mul feeding Slice ends, Shape→Gather→Concat feeding
// Reshape) into constants, so that ONNX shape inference can give static
// shapes to the operators those values feed. ONNX 1.12's data propagation
// stops at Div and its Slice inference reads only constant operands, which
// left such outputs of unknown shape and the numerical check impossible.
#ifndef TASO_ONNX_IO_ONNX_SHAPE_FOLDING_H_
#define TASO_ONNX_IO_ONNX_SHAPE_FOLDING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace taso::onnx_internal {

// A small integer tensor computed from constants and static shapes.
struct FoldedInts {
  int32_t elem_type = 0;  // onnx::TensorProto::INT64 or INT32
  std::vector<int64_t> dims;
  std::vector<int64_t> values;
};

// Folds what it can of `model` (a copy used for inference only), given
// `inferred`, the same model after shape inference (for Shape's operand):
// each folded node is removed and its output becomes an initializer.
// Returns the values folded in this call by name (empty: nothing left to
// fold). Only default-domain Shape, Gather, Concat, Unsqueeze, Squeeze,
// Cast, Identity, Slice, Add, Sub, Mul and Div on small integer tensors fold.
std::map<std::string, FoldedInts> FoldShapeArithmetic(onnx::ModelProto& model, const onnx::ModelProto& inferred);

// Rewrites nodes the version bridge (onnx_versions.h) left of unknown shape
// into the forms ONNX 1.12 infers, once inference has found their data's rank
// and their operands are constants: opset 18's Pad and Resize for listed
// axes, with pads, scales or sizes written out for every axis. Returns how
// many nodes it rewrote. On the inference copy only, like the folding.
int NormalizeBridgedNodes(onnx::ModelProto& model, const onnx::ModelProto& inferred);

}  // namespace taso::onnx_internal

#endif  // TASO_ONNX_IO_ONNX_SHAPE_FOLDING_H_
