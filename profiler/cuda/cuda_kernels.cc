// BuildPlan: the dispatch from an operator kind to its kernel family's plan
// builder (cuda_plans.h).
#include "profiler/cuda/cuda_kernels.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/op.h"
#include "profiler/cuda/cuda_kernel_support.h"
#include "profiler/cuda/cuda_plans.h"

namespace taso::profiler::cuda {

absl::StatusOr<Plan> BuildPlan(const CanonicalSignature& s, const std::vector<float*>& inputs,
                               const DeviceContext& ctx, Arena& arena) {
  if (inputs.size() != s.op.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda backend: ", s.key, ": ", inputs.size(), " input buffers for ", s.op.inputs.size(), " inputs"));
  }
  switch (s.op.kind) {
    case OpKind::kConv2D:
      return Conv2D(s, inputs, ctx, arena);
    case OpKind::kMatMul:
      return MatMul(s, inputs, ctx, arena);
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
      return Pool(s, inputs, ctx, arena);
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
      return Activate(s, inputs, ctx, arena);
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
    case OpKind::kScalarMul:
      return Elementwise(s, inputs, ctx, arena);
    case OpKind::kBatchNorm:
      return BatchNorm(s, inputs, ctx, arena);
    case OpKind::kTranspose:
    case OpKind::kReshape:
    case OpKind::kConcat:
    case OpKind::kSplit:
    case OpKind::kEnlarge:
    case OpKind::kMergeGConv:
      return DataMovement(s, inputs, ctx, arena);
    default:
      return Unsupported(s, "no CUDA kernel for this operator");
  }
}

}  // namespace taso::profiler::cuda
