#include "profiler/cuda_kernels.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
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
namespace {

// cuDNN and cuBLAS read their scaling factors from host memory.
const float kOne = 1.0f;
const float kZero = 0.0f;

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

// Row-major up to the strides of size-1 dimensions, which address nothing:
// element i of the logical order sits at offset i.
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

// Dimensions shared by several operands of an element-by-element operation
// (element-wise kernels, copies), with one stride vector per operand.
struct Loop {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;
};

// Drops size-1 dimensions, optionally orders the rest by operand 0's strides
// (outermost first; legal because every element is independent), and merges
// neighbours that are contiguous in every operand. Fewer dimensions keep
// cuDNN's rank limits at bay and let plain memcpy handle most copies.
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

// Dims as an operand with stride 0 (broadcast) sees them: 1 there.
std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  std::vector<int64_t> out = dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (strides[i] == 0) out[i] = 1;
  }
  return out;
}

// `t`'s strides aligned to the last dims of an output of `out_dims` (numpy
// broadcasting), with 0 wherever t is broadcast.
std::vector<int64_t> AlignedStrides(const TensorType& t, const std::vector<int64_t>& out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  const size_t offset = out_dims.size() - t.dims.size();
  for (size_t i = 0; i < t.dims.size(); ++i) s[offset + i] = t.dims[i] == 1 ? 0 : t.strides[i];
  return s;
}

// "a x3" when every part ran the same kernel, else "a + b".
std::string JoinKernels(const std::vector<std::string>& parts) {
  if (!parts.empty() && std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return p == parts[0]; })) {
    return parts.size() == 1 ? parts[0] : absl::StrCat(parts[0], " x", parts.size());
  }
  return absl::StrJoin(parts, " + ");
}

struct CopyStep {
  Step step;
  std::string kernel;
};

// dst = src for a tensor of `dims` held in two layouts. Contiguous rows go
// through cudaMemcpy{,2D,3D}Async; anything else through cudnnTransformTensor.
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

// Runs a one-time preparation step now (not part of the timed repetition).
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

// y = act(x) over `count` contiguous elements (in place when x == y, which
// cuDNN allows for identical descriptors).
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

// Appends the fused-activation parameter of conv2d / matmul, applied in place
// on the output after the main kernel, inside the timed repetition.
absl::Status AppendActivation(const DeviceContext& ctx, Arena& arena, Activation a, float* out, int64_t count,
                              Plan& plan) {
  const auto mode = ActivationMode(a);
  if (!mode) return absl::OkStatus();
  TASO_CUDA_ASSIGN_OR_RETURN(Step step, FlatActivation(ctx, arena, *mode, out, out, count));
  plan.steps.push_back(std::move(step));
  absl::StrAppend(&plan.kernel, " + cudnnActivationForward ", ActivationModeName(*mode));
  return absl::OkStatus();
}

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

// Padding of one spatial dimension (axis 0: height, 1: width) of conv2d /
// pooling, as ComputeWindow defines it: SAME puts the smaller half before;
// explicit padding keeps only the part the windows reach.
struct SpatialPadding {
  int64_t out = 0;
  int64_t before = 0;
  int64_t after = 0;
};

absl::StatusOr<SpatialPadding> PaddingOf(const OpParams& params, int axis, int64_t in, int64_t kernel) {
  auto g = ComputeWindow(params, axis, in, kernel);
  if (!g.ok()) return g.status();
  SpatialPadding p;
  p.out = g->out;
  p.before = g->pad_before;
  p.after = g->pad_after;
  return p;
}

// The 4-D input a conv2d / pooling kernel reads: the input itself when cuDNN's
// symmetric padding matches, else a copy with the padding written out (cuDNN
// cannot pad one side more than the other). The copy is made once, outside
// the timed repetition: a deployment writes such a tensor straight into a
// padded buffer, so only the kernel on it is the operator's cost.
struct WindowInput {
  const float* data = nullptr;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  int pad_h = 0;
  int pad_w = 0;
};

absl::StatusOr<WindowInput> PrepareWindowInput(const TensorType& x, const float* data, const SpatialPadding& ph,
                                               const SpatialPadding& pw, float pad_value, const DeviceContext& ctx,
                                               Arena& arena) {
  WindowInput w;
  if (ph.before == ph.after && pw.before == pw.after) {
    w.data = data;
    w.dims = x.dims;
    w.strides = x.strides;
    w.pad_h = static_cast<int>(ph.before);
    w.pad_w = static_cast<int>(pw.before);
    return w;
  }
  const int64_t hp = x.dims[2] + ph.before + ph.after, wp = x.dims[3] + pw.before + pw.after;
  w.dims = {x.dims[0], x.dims[1], hp, wp};
  w.strides = RowMajorStrides(w.dims);
  TASO_CUDA_ASSIGN_OR_RETURN(float* padded, arena.Floats(Product(w.dims)));  // zeroed
  if (pad_value != 0.0f) {
    TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t desc, arena.Tensor(w.dims, w.strides));
    TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetTensor(ctx.cudnn, desc, padded, &pad_value), "cudnnSetTensor"));
  }
  float* interior = padded + ph.before * wp + pw.before;
  TASO_CUDA_RETURN_IF_ERROR(RunNow(StridedCopy(ctx, arena, x.dims, data, x.strides, interior, w.strides)));
  w.data = padded;
  return w;
}

const char* ConvAlgorithmName(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

// conv2d: cuDNN's fastest algorithm (by its own search, with workspace), then
// the activation in place. Timed: the convolution (+ activation) only; with
// asymmetric SAME padding it runs on the pre-padded input (see WindowInput).
// Math is strict FP32 (no TF32 tensor cores) so the cost is of the float32
// operator the signature names, and results match the reference to ~1e-5.
//
// With a bias (the optional third input, one value per output channel) the
// result is act(conv + bias). Where cuDNN can fuse it, one
// cudnnConvolutionBiasActivationForward call does it all: with RELU for any
// algorithm, with IDENTITY only for IMPLICIT_PRECOMP_GEMM. Otherwise (tanh,
// sigmoid, or no activation with another algorithm), or when the fused call
// turns out unsupported for this configuration, the convolution is followed
// by cudnnAddTensor and the activation: three kernels, all timed.
absl::StatusOr<Plan> Conv2D(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                            Arena& arena) {
  const OpParams& p = s.op.params;
  const TensorType& x = s.op.inputs[0];
  const TensorType& w = s.op.inputs[1];
  const TensorType& y = s.outputs[0];
  if (!IsDenseRowMajor(w)) return Unsupported(s, "the weight must be row-major (OIHW): cuDNN filters have no strides");
  const bool has_bias = s.op.inputs.size() > 2;
  if (has_bias && !IsDenseRowMajor(s.op.inputs[2])) {
    return Unsupported(s, "the bias must be contiguous: cuDNN reads it as a packed 1xCx1x1 tensor");
  }
  const int64_t groups = x.dims[1] / w.dims[1];
  TASO_CUDA_ASSIGN_OR_RETURN(SpatialPadding ph, PaddingOf(p, 0, x.dims[2], w.dims[2]));
  TASO_CUDA_ASSIGN_OR_RETURN(SpatialPadding pw, PaddingOf(p, 1, x.dims[3], w.dims[3]));
  TASO_CUDA_ASSIGN_OR_RETURN(WindowInput src, PrepareWindowInput(x, in[0], ph, pw, 0.0f, ctx, arena));

  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t x_desc, arena.Tensor(src.dims, src.strides));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnFilterDescriptor_t w_desc, arena.Filter(w.dims));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t y_desc, arena.Tensor(y.dims, y.strides));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnConvolutionDescriptor_t conv, arena.Convolution());
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(
      cudnnSetConvolution2dDescriptor(conv, src.pad_h, src.pad_w, p.stride_h, p.stride_w, 1, 1,
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cudnnSetConvolution2dDescriptor"));
  TASO_CUDA_RETURN_IF_ERROR(
      CudnnCall(cudnnSetConvolutionGroupCount(conv, static_cast<int>(groups)), "cudnnSetConvolutionGroupCount"));
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType"));
  int on = 0, oc = 0, oh = 0, ow = 0;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnGetConvolution2dForwardOutputDim(conv, x_desc, w_desc, &on, &oc, &oh, &ow),
                                      "cudnnGetConvolution2dForwardOutputDim"));
  if (std::vector<int64_t>{on, oc, oh, ow} != y.dims) {
    return absl::InternalError(absl::StrCat("cuda backend: ", s.key, ": cuDNN computes output ",
                                            DimsToString({on, oc, oh, ow}), ", shape inference ",
                                            DimsToString(y.dims)));
  }
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));

  // Workspace for the search: the most any algorithm asks for, within half
  // of the free memory (algorithms that need more are skipped by the search).
  size_t workspace_bytes = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, x_desc, w_desc, conv, y_desc,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(a),
                                                &bytes) == CUDNN_STATUS_SUCCESS) {
      workspace_bytes = std::max(workspace_bytes, bytes);
    }
  }
  size_t free_bytes = 0, total_bytes = 0;
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  workspace_bytes = std::min(workspace_bytes, free_bytes / 2);
  TASO_CUDA_ASSIGN_OR_RETURN(void* workspace, arena.Bytes(workspace_bytes));

  int max_algorithms = 0;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnGetConvolutionForwardAlgorithmMaxCount(ctx.cudnn, &max_algorithms),
                                      "cudnnGetConvolutionForwardAlgorithmMaxCount"));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_algorithms, 1));
  int found = 0;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(
      cudnnFindConvolutionForwardAlgorithmEx(ctx.cudnn, x_desc, src.data, w_desc, in[1], conv, y_desc, out,
                                             static_cast<int>(perf.size()), &found, perf.data(), workspace,
                                             workspace_bytes),
      "cudnnFindConvolutionForwardAlgorithmEx"));
  // Results come sorted by time; take the fastest that ran.
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  for (int i = 0; i < found && best == nullptr; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace_bytes) best = &perf[i];
  }
  if (best == nullptr) return Unsupported(s, "no cuDNN forward convolution algorithm supports this configuration");
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetConvolutionMathType(conv, best->mathType), "cudnnSetConvolutionMathType"));

  const cudnnConvolutionFwdAlgo_t algo = best->algo;
  const cudnnHandle_t cudnn = ctx.cudnn;
  const float* x_data = src.data;
  const float* w_data = in[1];
  Plan plan;
  plan.kernel = absl::StrCat("cudnn ", ConvAlgorithmName(algo));
  plan.outputs = {out};
  const float* b_data = has_bias ? in[2] : nullptr;
  cudnnTensorDescriptor_t b_desc = nullptr;
  if (has_bias) {
    TASO_CUDA_ASSIGN_OR_RETURN(b_desc, arena.Tensor({1, y.dims[1], 1, 1}, {y.dims[1], 1, 1, 1}));
    const bool relu = p.activation == Activation::kRelu;
    const bool identity = p.activation == Activation::kNone && algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    if (relu || identity) {
      TASO_CUDA_ASSIGN_OR_RETURN(cudnnActivationDescriptor_t act,
                                 arena.Activation(relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY));
      // y = act(1 * conv(x) + 0 * z + bias); z aliases y and is not read.
      Step fused = [=] {
        return CudnnCall(cudnnConvolutionBiasActivationForward(cudnn, &kOne, x_desc, x_data, w_desc, w_data, conv,
                                                               algo, workspace, workspace_bytes, &kZero, y_desc,
                                                               out, b_desc, b_data, act, y_desc, out),
                         "cudnnConvolutionBiasActivationForward");
      };
      // One untimed trial: the fused kernel does not cover every
      // configuration the plain one does (cuDNN answers NOT_SUPPORTED or a
      // BAD_PARAM); then fall back to the separate kernels below, which
      // report any real problem themselves.
      absl::Status trial = fused();
      if (trial.ok()) trial = CudaCall(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
      if (trial.ok()) {
        plan.steps.push_back(std::move(fused));
        absl::StrAppend(&plan.kernel, " fused bias+", relu ? "RELU" : "IDENTITY",
                        " (cudnnConvolutionBiasActivationForward)");
        return plan;
      }
      if (!absl::IsUnimplemented(trial) && !absl::IsInvalidArgument(trial)) return trial;
    }
  }
  plan.steps.push_back([=] {
    return CudnnCall(cudnnConvolutionForward(cudnn, &kOne, x_desc, x_data, w_desc, w_data, conv, algo, workspace,
                                             workspace_bytes, &kZero, y_desc, out),
                     "cudnnConvolutionForward");
  });
  if (has_bias) {
    // out += bias, broadcast over batch and space, before the activation.
    plan.steps.push_back([=] {
      return CudnnCall(cudnnAddTensor(cudnn, &kOne, b_desc, b_data, &kOne, y_desc, out), "cudnnAddTensor");
    });
    absl::StrAppend(&plan.kernel, " + cudnnAddTensor bias");
  }
  TASO_CUDA_RETURN_IF_ERROR(AppendActivation(ctx, arena, p.activation, out, y.num_elements(), plan));
  return plan;
}

// poolavg / poolmax with cudnnPoolingForward. Asymmetric SAME padding runs on
// a pre-padded input (zeros for average, -inf for max; see WindowInput). An
// average that excludes padding cannot tell written-out zeros from data, so
// there it pools including padding and rescales each output position by
// KH*KW / (valid taps): that multiply is part of the timed work.
absl::StatusOr<Plan> Pool(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                          Arena& arena) {
  const OpParams& p = s.op.params;
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.outputs[0];
  const bool average = s.op.kind == OpKind::kPoolAvg;
  TASO_CUDA_ASSIGN_OR_RETURN(SpatialPadding ph, PaddingOf(p, 0, x.dims[2], p.kernel_h));
  TASO_CUDA_ASSIGN_OR_RETURN(SpatialPadding pw, PaddingOf(p, 1, x.dims[3], p.kernel_w));
  const bool asymmetric = ph.before != ph.after || pw.before != pw.after;
  const float pad_value = average ? 0.0f : -std::numeric_limits<float>::infinity();
  TASO_CUDA_ASSIGN_OR_RETURN(WindowInput src, PrepareWindowInput(x, in[0], ph, pw, pad_value, ctx, arena));

  const bool rescale = average && !p.count_include_pad && asymmetric;
  const cudnnPoolingMode_t mode = !average ? CUDNN_POOLING_MAX
                                  : (p.count_include_pad || rescale) ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                     : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnPoolingDescriptor_t pool, arena.Pooling());
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetPooling2dDescriptor(pool, mode, CUDNN_PROPAGATE_NAN, p.kernel_h,
                                                                  p.kernel_w, src.pad_h, src.pad_w, p.stride_h,
                                                                  p.stride_w),
                                      "cudnnSetPooling2dDescriptor"));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t x_desc, arena.Tensor(src.dims, src.strides));
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t y_desc, arena.Tensor(y.dims, y.strides));
  int on = 0, oc = 0, oh = 0, ow = 0;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnGetPooling2dForwardOutputDim(pool, x_desc, &on, &oc, &oh, &ow),
                                      "cudnnGetPooling2dForwardOutputDim"));
  if (std::vector<int64_t>{on, oc, oh, ow} != y.dims) {
    return absl::InternalError(absl::StrCat("cuda backend: ", s.key, ": cuDNN pools to ",
                                            DimsToString({on, oc, oh, ow}), ", shape inference ",
                                            DimsToString(y.dims)));
  }
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
  float* pooled = out;
  if (rescale) {
    TASO_CUDA_ASSIGN_OR_RETURN(pooled, arena.Floats(LayoutExtent(y)));
  }
  const cudnnHandle_t cudnn = ctx.cudnn;
  const float* x_data = src.data;
  Plan plan;
  plan.steps.push_back([=] {
    return CudnnCall(cudnnPoolingForward(cudnn, pool, &kOne, x_desc, x_data, &kZero, y_desc, pooled),
                     "cudnnPoolingForward");
  });
  plan.kernel = !average ? "cudnnPoolingForward MAX"
                : mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? "cudnnPoolingForward AVERAGE_COUNT_INCLUDE_PADDING"
                                                                      : "cudnnPoolingForward AVERAGE_COUNT_EXCLUDE_PADDING";
  if (rescale) {
    const int64_t ho = y.dims[2], wo = y.dims[3];
    auto valid = [](int64_t o, int64_t stride, int64_t before, int64_t kernel, int64_t extent) {
      const int64_t first = o * stride - before;
      return std::min(first + kernel, extent) - std::max<int64_t>(first, 0);
    };
    std::vector<float> factor(ho * wo);
    for (int64_t oy = 0; oy < ho; ++oy) {
      for (int64_t ox = 0; ox < wo; ++ox) {
        const int64_t taps = valid(oy, p.stride_h, ph.before, p.kernel_h, x.dims[2]) *
                             valid(ox, p.stride_w, pw.before, p.kernel_w, x.dims[3]);
        factor[oy * wo + ox] = static_cast<float>(p.kernel_h * p.kernel_w) / static_cast<float>(std::max<int64_t>(taps, 1));
      }
    }
    TASO_CUDA_ASSIGN_OR_RETURN(float* factor_data, arena.Floats(ho * wo));
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaMemcpyAsync(factor_data, factor.data(), factor.size() * sizeof(float),
                                                       cudaMemcpyHostToDevice, ctx.stream),
                                       "cudaMemcpyAsync"));
    // `factor` is pageable host memory: finish the upload before it goes.
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize"));
    TASO_CUDA_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t f_desc, arena.Tensor({1, 1, ho, wo}, {ho * wo, ho * wo, wo, 1}));
    TASO_CUDA_ASSIGN_OR_RETURN(cudnnOpTensorDescriptor_t mul, arena.OpTensor(CUDNN_OP_TENSOR_MUL));
    plan.steps.push_back([=] {
      return CudnnCall(cudnnOpTensor(cudnn, mul, &kOne, y_desc, pooled, &kOne, f_desc, factor_data, &kZero, y_desc, out),
                       "cudnnOpTensor");
    });
    plan.kernel += " + cudnnOpTensor MUL (exclude-padding rescale)";
  }
  plan.outputs = {out};
  return plan;
}

// One matmul operand as cuBLAS sees it in the row-major-as-column-major
// formulation below: a row-major matrix needs no transpose, a column-major
// one (TASO's transposed layout) is read transposed, never copied.
struct GemmOperand {
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
  int64_t batch_stride = 0;  // 0: one matrix for every batch entry
};

absl::StatusOr<GemmOperand> DescribeGemmOperand(const CanonicalSignature& s, const TensorType& t,
                                                const std::vector<int64_t>& out_batch) {
  const int r = t.rank();
  const int64_t rows = t.dims[r - 2], cols = t.dims[r - 1];
  const int64_t row_stride = t.strides[r - 2], col_stride = t.strides[r - 1];
  GemmOperand g;
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols)) {
    g.op = CUBLAS_OP_N;
    g.ld = rows == 1 ? cols : row_stride;
  } else if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows)) {
    g.op = CUBLAS_OP_T;
    g.ld = cols == 1 ? rows : col_stride;
  } else {
    return Unsupported(s, absl::StrCat("operand ", t.ToString(),
                                       " is neither row- nor column-major in its last two dimensions"));
  }
  g.ld = std::max<int64_t>(g.ld, 1);
  const std::vector<int64_t> batch(t.dims.begin(), t.dims.end() - 2);
  if (Product(batch) == 1) return g;  // broadcast over every batch entry
  const size_t offset = out_batch.size() - batch.size();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] != out_batch[offset + i]) {
      return Unsupported(s, "cublasSgemmStridedBatched cannot broadcast part of an operand's batch dimensions");
    }
  }
  // The batch entries must sit one stride apart.
  const Loop l = Simplify({batch, {std::vector<int64_t>(t.strides.begin(), t.strides.end() - 2)}}, false);
  if (l.dims.size() != 1) return Unsupported(s, absl::StrCat("the batch entries of ", t.ToString(), " are not evenly strided"));
  g.batch_stride = l.strides[0][0];
  return g;
}

// matmul: C = X Y with cublasSgemmStridedBatched. cuBLAS is column-major, so
// it computes C^T = Y^T X^T: a row-major C (m x n) is a column-major C^T.
// The activation follows in place, inside the timed repetition.
absl::StatusOr<Plan> MatMul(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                            Arena& arena) {
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.op.inputs[1];
  const TensorType& c = s.outputs[0];
  const int r = c.rank();
  const std::vector<int64_t> out_batch(c.dims.begin(), c.dims.end() - 2);
  const int64_t m = c.dims[r - 2], n = c.dims[r - 1], k = x.dims[x.rank() - 1];
  const int64_t batch = Product(out_batch);
  TASO_CUDA_ASSIGN_OR_RETURN(GemmOperand gx, DescribeGemmOperand(s, x, out_batch));
  TASO_CUDA_ASSIGN_OR_RETURN(GemmOperand gy, DescribeGemmOperand(s, y, out_batch));
  for (int64_t v : {m, n, k, batch, gx.ld, gy.ld}) {
    if (!FitsInt(v)) return Unsupported(s, "a matrix extent exceeds cuBLAS's 32-bit sizes");
  }
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(c)));
  const cublasHandle_t cublas = ctx.cublas;
  const float* x_data = in[0];
  const float* y_data = in[1];
  Plan plan;
  plan.steps.push_back([=] {
    return CublasCall(cublasSgemmStridedBatched(cublas, gy.op, gx.op, static_cast<int>(n), static_cast<int>(m),
                                                static_cast<int>(k), &kOne, y_data, static_cast<int>(gy.ld),
                                                gy.batch_stride, x_data, static_cast<int>(gx.ld), gx.batch_stride,
                                                &kZero, out, static_cast<int>(n), m * n, static_cast<int>(batch)),
                      "cublasSgemmStridedBatched");
  });
  auto letter = [](cublasOperation_t op) { return op == CUBLAS_OP_N ? "N" : "T"; };
  plan.kernel = absl::StrCat("cublasSgemmStridedBatched ", letter(gy.op), letter(gx.op));
  TASO_CUDA_RETURN_IF_ERROR(AppendActivation(ctx, arena, s.op.params.activation, out, c.num_elements(), plan));
  plan.outputs = {out};
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

}  // namespace

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
