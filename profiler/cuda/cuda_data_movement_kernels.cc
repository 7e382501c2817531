#include "profiler/cuda/cuda_plans.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/op.h"
#include "profiler/cuda/cuda_kernel_support.h"

namespace taso::profiler::cuda {

// Operators that only move data: transpose, reshape, concat, split, enlarge,
// merge_gconv. Each output element is a copy of one input element (or 0).
absl::StatusOr<Plan> DataMovement(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                                  Arena& arena) {
  const OpParams& p = s.op.params;
  const TensorType& x = s.op.inputs[0];
  Plan plan;
  std::vector<std::string> kernels;
  auto add_copy = [&](const std::vector<int64_t>& dims, const float* src, const std::vector<int64_t>& src_strides,
                      float* dst, const std::vector<int64_t>& dst_strides) -> absl::Status {
    TASO_CUDA_ASSIGN_OR_RETURN(CopyStep copy, StridedCopy(ctx, arena, dims, src, src_strides, dst, dst_strides));
    plan.steps.push_back(std::move(copy.step));
    kernels.push_back(std::move(copy.kernel));
    return absl::OkStatus();
  };
  auto view = [&] {
    plan.is_view = true;
    plan.kernel = "view";
    plan.outputs = {in[0]};
    return plan;
  };
  switch (s.op.kind) {
    case OpKind::kTranspose: {
      if (!p.shuffle) return view();
      const TensorType& y = s.outputs[0];
      std::vector<int64_t> src_strides;
      for (int d : p.perm) src_strides.push_back(x.strides[d]);
      TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
      TASO_CUDA_RETURN_IF_ERROR(add_copy(y.dims, in[0], src_strides, out, y.strides));
      plan.outputs = {out};
      break;
    }
    case OpKind::kReshape: {
      if (IsDenseRowMajor(x)) return view();
      TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(x.num_elements()));
      TASO_CUDA_RETURN_IF_ERROR(add_copy(x.dims, in[0], x.strides, out, RowMajorStrides(x.dims)));
      plan.outputs = {out};
      break;
    }
    case OpKind::kConcat: {
      const TensorType& y = s.outputs[0];
      TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
      int64_t at = 0;
      for (size_t i = 0; i < s.op.inputs.size(); ++i) {
        const TensorType& part = s.op.inputs[i];
        TASO_CUDA_RETURN_IF_ERROR(add_copy(part.dims, in[i], part.strides, out + at * y.strides[p.axis], y.strides));
        at += part.dims[p.axis];
      }
      plan.outputs = {out};
      break;
    }
    case OpKind::kSplit: {
      int64_t at = 0;
      for (const TensorType& part : s.outputs) {
        TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(part)));
        TASO_CUDA_RETURN_IF_ERROR(add_copy(part.dims, in[0] + at * x.strides[p.axis], x.strides, out, part.strides));
        plan.outputs.push_back(out);
        at += part.dims[p.axis];
      }
      break;
    }
    case OpKind::kEnlarge: {
      // Zero the larger kernel, then copy the weight into its centre.
      const TensorType& y = s.outputs[0];
      TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
      plan.steps.push_back(MemsetStep(ctx, out, LayoutExtent(y)));
      kernels.push_back("cudaMemsetAsync");
      const int64_t dy = (y.dims[2] - x.dims[2]) / 2, dx = (y.dims[3] - x.dims[3]) / 2;
      TASO_CUDA_RETURN_IF_ERROR(add_copy(x.dims, in[0], x.strides, out + dy * y.strides[2] + dx * y.strides[3], y.strides));
      plan.outputs = {out};
      break;
    }
    case OpKind::kMergeGConv: {
      // out[oc, b*cg + ic] = w[oc, ic] where b = (oc / per_group) % count.
      // With oc = (g_hi*count + b)*per_group + j this is one strided copy
      // over (g_hi, b, j, ic, kh, kw).
      const TensorType& y = s.outputs[0];
      TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
      plan.steps.push_back(MemsetStep(ctx, out, LayoutExtent(y)));
      kernels.push_back("cudaMemsetAsync");
      const int64_t count = p.count, per_group = x.dims[0] / p.groups, cg = x.dims[1];
      const std::vector<int64_t>& ws = x.strides;
      const std::vector<int64_t>& os = y.strides;
      const std::vector<int64_t> dims = {p.groups / count, count, per_group, cg, x.dims[2], x.dims[3]};
      const std::vector<int64_t> src = {ws[0] * count * per_group, ws[0] * per_group, ws[0], ws[1], ws[2], ws[3]};
      const std::vector<int64_t> dst = {os[0] * count * per_group, os[0] * per_group + os[1] * cg, os[0], os[1],
                                        os[2], os[3]};
      TASO_CUDA_RETURN_IF_ERROR(add_copy(dims, in[0], src, out, dst));
      plan.outputs = {out};
      break;
    }
    default:
      return Unsupported(s, "not a data-movement operator");
  }
  plan.kernel = JoinKernels(kernels);
  return plan;
}

}  // namespace taso::profiler::cuda
