#include "profiler/cuda/cuda_plans.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/op.h"
#include "profiler/cuda/cuda_kernel_support.h"

namespace taso::profiler::cuda {

absl::StatusOr<Plan> Activate(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                              Arena& arena) {
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.outputs[0];
  const cudnnActivationMode_t mode = s.op.kind == OpKind::kRelu   ? CUDNN_ACTIVATION_RELU
                                     : s.op.kind == OpKind::kTanh ? CUDNN_ACTIVATION_TANH
                                                                  : CUDNN_ACTIVATION_SIGMOID;
  Plan plan;
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
  const Loop l = Simplify({y.dims, {y.strides, x.strides}}, /*reorder=*/true);
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t y_desc, arena.Tensor(l.dims, l.strides[0]));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t x_desc, arena.Tensor(l.dims, l.strides[1]));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnActivationDescriptor_t act, arena.Activation(mode));
  const cudnnHandle_t cudnn = ctx.cudnn;
  const float* src = in[0];
  plan.steps.push_back([=] {
    return CudnnCall(cudnnActivationForward(cudnn, act, &kOne, x_desc, src, &kZero, y_desc, out),
                     "cudnnActivationForward");
  });
  plan.kernel = absl::StrCat("cudnnActivationForward ", ActivationModeName(mode));
  plan.outputs = {out};
  return plan;
}

// ewadd, ewmul, smul: C = op(A, B) with numpy broadcasting. cuDNN broadcasts
// only its B operand, so a broadcast first operand is swapped (both ops
// commute); when both are broadcast, A is first materialised at the output
// shape with cudnnAddTensor, and that copy is part of the timed work.
absl::StatusOr<Plan> Elementwise(const CanonicalSignature& s, const std::vector<float*>& in,
                                 const DeviceContext& ctx, Arena& arena) {
  const TensorType& out = s.outputs[0];
  const bool add = s.op.kind == OpKind::kEwAdd;
  TensorType ta = s.op.inputs[0], tb = s.op.inputs[1];
  const float* a = in[0];
  const float* b = in[1];
  auto full = [&](const TensorType& t) { return t.num_elements() == out.num_elements(); };
  if (!full(ta) && full(tb)) {
    std::swap(ta, tb);
    std::swap(a, b);
  }
  Plan plan;
  TASO_CUDA_ASSIGN_OR_RETURN(float* c, arena.Floats(LayoutExtent(out)));
  const cudnnHandle_t cudnn = ctx.cudnn;
  std::vector<std::string> kernels;
  if (!full(ta)) {
    const std::vector<int64_t> dense = RowMajorStrides(out.dims);
    const Loop l = Simplify({out.dims, {dense, AlignedStrides(ta, out.dims)}}, /*reorder=*/false);
    if (l.dims.size() > 5) return Unsupported(s, "cudnnAddTensor broadcasts at most 5 dimensions");
    TASO_CUDA_ASSIGN_OR_RETURN(float* expanded, arena.Floats(out.num_elements()));
    TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t dst_desc, arena.Tensor(l.dims, l.strides[0]));
    TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t src_desc,
                               arena.Tensor(BroadcastDims(l.dims, l.strides[1]), l.strides[1]));
    plan.steps.push_back([=] {
      return CudnnCall(cudnnAddTensor(cudnn, &kOne, src_desc, a, &kZero, dst_desc, expanded), "cudnnAddTensor");
    });
    kernels.push_back("cudnnAddTensor");
    a = expanded;
    ta = TensorType::RowMajor(out.dtype, out.dims);
  }
  const Loop l = Simplify({out.dims, {out.strides, AlignedStrides(ta, out.dims), AlignedStrides(tb, out.dims)}},
                          /*reorder=*/true);
  if (l.dims.size() > 5) return Unsupported(s, "cudnnOpTensor supports at most 5 dimensions");
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t c_desc, arena.Tensor(l.dims, l.strides[0]));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t a_desc, arena.Tensor(l.dims, l.strides[1]));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t b_desc,
                             arena.Tensor(BroadcastDims(l.dims, l.strides[2]), l.strides[2]));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnOpTensorDescriptor_t op,
                             arena.OpTensor(add ? CUDNN_OP_TENSOR_ADD : CUDNN_OP_TENSOR_MUL));
  plan.steps.push_back([=] {
    return CudnnCall(cudnnOpTensor(cudnn, op, &kOne, a_desc, a, &kOne, b_desc, b, &kZero, c_desc, c),
                     "cudnnOpTensor");
  });
  kernels.push_back(add ? "cudnnOpTensor ADD" : "cudnnOpTensor MUL");
  plan.kernel = absl::StrJoin(kernels, " + ");
  plan.outputs = {c};
  return plan;
}

// batchnorm (inference): cudnnBatchNormalizationForwardInference, spatial
// mode, with the trailing dimensions folded into one.
absl::StatusOr<Plan> BatchNorm(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                               Arena& arena) {
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.outputs[0];
  const double epsilon = s.op.params.epsilon;
  if (epsilon < CUDNN_BN_MIN_EPSILON) {
    return absl::InvalidArgumentError(absl::StrCat("cuda backend: ", s.key, ": epsilon ", epsilon,
                                                   " is below cuDNN's minimum ", CUDNN_BN_MIN_EPSILON));
  }
  for (int i = 1; i < 5; ++i) {
    const TensorType& t = s.op.inputs[i];
    if (t.dims[0] > 1 && t.strides[0] != 1) return Unsupported(s, "scale, bias, mean and variance must be contiguous");
  }
  const std::vector<int64_t> rest_dims(x.dims.begin() + 2, x.dims.end());
  const std::vector<int64_t> rest_strides(x.strides.begin() + 2, x.strides.end());
  const Loop rest = Simplify({rest_dims, {rest_strides}}, /*reorder=*/false);
  if (rest.dims.size() != 1) return Unsupported(s, "the spatial dimensions of the input are not evenly strided");
  const int64_t spatial = rest.dims[0];
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t x_desc,
                             arena.Tensor({x.dims[0], x.dims[1], spatial, 1},
                                          {x.strides[0], x.strides[1], rest.strides[0][0], 1}));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t y_desc,
                             arena.Tensor({y.dims[0], y.dims[1], spatial, 1}, {y.dims[1] * spatial, spatial, 1, 1}));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t bn_desc, arena.Tensor({1, x.dims[1], 1, 1}, {x.dims[1], 1, 1, 1}));
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
  const cudnnHandle_t cudnn = ctx.cudnn;
  const std::vector<float*> v = in;
  Plan plan;
  plan.steps.push_back([=] {
    return CudnnCall(cudnnBatchNormalizationForwardInference(cudnn, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, x_desc,
                                                             v[0], y_desc, out, bn_desc, v[1], v[2], v[3], v[4],
                                                             epsilon),
                     "cudnnBatchNormalizationForwardInference");
  });
  plan.kernel = "cudnnBatchNormalizationForwardInference SPATIAL";
  plan.outputs = {out};
  return plan;
}

}  // namespace taso::profiler::cuda
