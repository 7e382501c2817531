#include "profiler/cuda/cuda_kernel_support.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/op.h"
#include "core/op_registry.h"

namespace taso::profiler::cuda {

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

bool IsDenseRowMajor(const TensorType& t) {
  const std::vector<int64_t> dense = RowMajorStrides(t.dims);
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i] != 1 && t.strides[i] != dense[i]) return false;
  }
  return true;
}

absl::Status Unsupported(const CanonicalSignature& s, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("cuda backend: ", s.key, ": ", why));
}

Loop Simplify(const Loop& in, bool reorder) {
  const size_t operands = in.strides.size();
  std::vector<size_t> order;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (in.dims[i] != 1) order.push_back(i);
  }
  if (reorder) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return in.strides[0][a] > in.strides[0][b]; });
  }
  Loop out;
  out.strides.resize(operands);
  for (size_t i : order) {
    bool merge = !out.dims.empty();
    for (size_t k = 0; merge && k < operands; ++k) {
      merge = out.strides[k].back() == in.strides[k][i] * in.dims[i];
    }
    if (merge) {
      out.dims.back() *= in.dims[i];
      for (size_t k = 0; k < operands; ++k) out.strides[k].back() = in.strides[k][i];
    } else {
      out.dims.push_back(in.dims[i]);
      for (size_t k = 0; k < operands; ++k) out.strides[k].push_back(in.strides[k][i]);
    }
  }
  if (out.dims.empty()) {
    out.dims = {1};
    for (auto& s : out.strides) s = {1};
  }
  return out;
}

std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  std::vector<int64_t> out = dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (strides[i] == 0) out[i] = 1;
  }
  return out;
}

std::vector<int64_t> AlignedStrides(const TensorType& t, const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  const size_t offset = out_dims.size() - t.dims.size();
  for (size_t i = 0; i < t.dims.size(); ++i) s[offset + i] = t.dims[i] == 1 ? 0 : t.strides[i];
  return s;
}

std::string JoinKernels(const std::vector<std::string>& parts) {
  if (!parts.empty() && std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return p == parts[0]; })) {
    return parts.size() == 1 ? parts[0] : absl::StrCat(parts[0], " x", parts.size());
  }
  return absl::StrJoin(parts, " + ");
}

absl::StatusOr<CopyStep> StridedCopy(const DeviceContext& ctx, Arena& arena, const std::vector<int64_t>& dims,
                                     const float* src, const std::vector<int64_t>& src_strides, float* dst,
                                     const std::vector<int64_t>& dst_strides) {
  const Loop l = Simplify({dims, {dst_strides, src_strides}}, /*reorder=*/true);
  const std::vector<int64_t>& d = l.dims;
  const std::vector<int64_t>& ds = l.strides[0];
  const std::vector<int64_t>& ss = l.strides[1];
  const size_t n = d.size();
  const cudaStream_t stream = ctx.stream;
  constexpr int64_t kF = sizeof(float);
  if (ds[n - 1] == 1 && ss[n - 1] == 1) {
    if (n == 1) {
      const size_t bytes = d[0] * kF;
      return CopyStep{[=] { return CudaCall(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
                                            "cudaMemcpyAsync"); },
                      "cudaMemcpyAsync"};
    }
    if (n == 2) {
      return CopyStep{[=] {
                        return CudaCall(cudaMemcpy2DAsync(dst, ds[0] * kF, src, ss[0] * kF, d[1] * kF, d[0],
                                                          cudaMemcpyDeviceToDevice, stream),
                                        "cudaMemcpy2DAsync");
                      },
                      "cudaMemcpy2DAsync"};
    }
    // A 3-D copy addresses slices as whole numbers of rows.
    if (n == 3 && ds[0] % ds[1] == 0 && ss[0] % ss[1] == 0) {
      cudaMemcpy3DParms params = {};
      // (pointer, row pitch in bytes, row width in bytes, rows per slice)
      params.srcPtr = {const_cast<float*>(src), static_cast<size_t>(ss[1] * kF), static_cast<size_t>(d[2] * kF),
                       static_cast<size_t>(ss[0] / ss[1])};
      params.dstPtr = {dst, static_cast<size_t>(ds[1] * kF), static_cast<size_t>(d[2] * kF),
                       static_cast<size_t>(ds[0] / ds[1])};
      params.extent = {static_cast<size_t>(d[2] * kF), static_cast<size_t>(d[1]), static_cast<size_t>(d[0])};
      params.kind = cudaMemcpyDeviceToDevice;
      return CopyStep{[=] { return CudaCall(cudaMemcpy3DAsync(&params, stream), "cudaMemcpy3DAsync"); },
                      "cudaMemcpy3DAsync"};
    }
  }
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t src_desc, arena.Tensor(d, ss));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t dst_desc, arena.Tensor(d, ds));
  const cudnnHandle_t cudnn = ctx.cudnn;
  return CopyStep{[=] {
                    return CudnnCall(cudnnTransformTensor(cudnn, &kOne, src_desc, src, &kZero, dst_desc, dst),
                                     "cudnnTransformTensor");
                  },
                  "cudnnTransformTensor"};
}

absl::Status RunNow(const absl::StatusOr<CopyStep>& copy) {
  if (!copy.ok()) return copy.status();
  return copy->step();
}

Step MemsetStep(const DeviceContext& ctx, float* dst, int64_t count) {
  const cudaStream_t stream = ctx.stream;
  return [=] { return CudaCall(cudaMemsetAsync(dst, 0, count * sizeof(float), stream), "cudaMemsetAsync"); };
}

const char* ActivationModeName(cudnnActivationMode_t mode) {
  switch (mode) {
    case CUDNN_ACTIVATION_RELU: return "RELU";
    case CUDNN_ACTIVATION_SIGMOID: return "SIGMOID";
    case CUDNN_ACTIVATION_TANH: return "TANH";
    default: return "OTHER";
  }
}

absl::StatusOr<Step> FlatActivation(const DeviceContext& ctx, Arena& arena, cudnnActivationMode_t mode,
                                    const float* x, float* y, int64_t count) {
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t desc, arena.Tensor({count}, {1}));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnActivationDescriptor_t act, arena.Activation(mode));
  const cudnnHandle_t cudnn = ctx.cudnn;
  return Step([=] {
    return CudnnCall(cudnnActivationForward(cudnn, act, &kOne, desc, x, &kZero, desc, y), "cudnnActivationForward");
  });
}

std::optional<cudnnActivationMode_t> ActivationMode(Activation a) {
  switch (a) {
    case Activation::kRelu: return CUDNN_ACTIVATION_RELU;
    case Activation::kSigmoid: return CUDNN_ACTIVATION_SIGMOID;
    case Activation::kTanh: return CUDNN_ACTIVATION_TANH;
    case Activation::kNone: break;
  }
  return std::nullopt;
}

absl::Status AppendActivation(const DeviceContext& ctx, Arena& arena, Activation a, float* out, int64_t count,
                              Plan& plan) {
  const auto mode = ActivationMode(a);
  if (!mode) return absl::OkStatus();
  TASO_CUDA_ASSIGN_OR_RETURN(Step step, FlatActivation(ctx, arena, *mode, out, out, count));
  plan.steps.push_back(std::move(step));
  absl::StrAppend(&plan.kernel, " + cudnnActivationForward ", ActivationModeName(*mode));
  return absl::OkStatus();
}

}  // namespace taso::profiler::cuda
