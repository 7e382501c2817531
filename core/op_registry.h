// What the IR knows about each operator: arity, output count and shape
// inference. Shape inference errors name the operator and the shapes involved.
#ifndef TASO_CORE_OP_REGISTRY_H_
#define TASO_CORE_OP_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "core/tensor_type.h"

namespace taso {

struct OpInfo {
  OpKind kind;
  const char* name;
  int min_inputs;
  int max_inputs;  // -1: unbounded (concat, opaque)
  bool is_source;  // input, weight and constants: no tensor inputs
};

const OpInfo& GetOpInfo(OpKind kind);

// InvalidArgument "KIND: WHAT (inputs: SHAPES)", the form of every shape error.
absl::Status InvalidOperands(OpKind kind, const std::string& what, const std::vector<TensorType>& inputs);

// Output types of `kind` applied to `inputs`, or InvalidArgument saying why not.
absl::StatusOr<std::vector<TensorType>> InferOutputTypes(OpKind kind, const OpParams& params,
                                                         const std::vector<TensorType>& inputs);

// Output extent of a sliding window along one dimension. SAME: ceil(in/stride),
// padding split with the smaller half before. VALID: no padding. EXPLICIT:
// the given padding on each side (floor division, as ONNX).
struct WindowGeometry {
  int64_t out = 0;
  int64_t pad_before = 0;
  // Padding after that the window actually reaches (never more than asked).
  int64_t pad_after = 0;
};
absl::StatusOr<WindowGeometry> ComputeWindow(int64_t in, int64_t kernel, int64_t stride, Padding padding);
// The window of a conv2d or pool along spatial dimension `axis` (0: height,
// 1: width), reading stride and padding (explicit pads included) from `p`.
absl::StatusOr<WindowGeometry> ComputeWindow(const OpParams& p, int axis, int64_t in, int64_t kernel);
// Rewrites explicit padding that computes exactly what SAME or VALID computes
// on an input of spatial size (in_h, in_w) into that form; otherwise leaves
// it explicit. Returns whether it changed `p`.
bool NormalizePadding(OpParams& p, int64_t in_h, int64_t in_w, int64_t kernel_h, int64_t kernel_w);

}  // namespace taso

#endif  // TASO_CORE_OP_REGISTRY_H_
