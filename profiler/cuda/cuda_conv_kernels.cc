// conv2d and pooling: the window operators, with the padded input they share.
#include "profiler/cuda/cuda_plans.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/op.h"
#include "core/op_registry.h"
#include "core/tensor_type.h"
#include "profiler/cuda/cuda_kernel_support.h"

namespace taso::profiler::cuda {

namespace {

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

// The descriptors of one convolution, set up and checked against shape
// inference.
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnTensorDescriptor_t y = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
};

absl::StatusOr<ConvDescriptors> DescribeConvolution(const CanonicalSignature& s, const WindowInput& src,
                                                    Arena& arena) {
  const OpParams& p = s.op.params;
  const TensorType& x = s.op.inputs[0];
  const TensorType& w = s.op.inputs[1];
  const TensorType& y = s.outputs[0];
  const int64_t groups = x.dims[1] / w.dims[1];
  ConvDescriptors d;
  TASO_CUDA_ASSIGN_OR_RETURN(d.x, arena.Tensor(src.dims, src.strides));
  TASO_CUDA_ASSIGN_OR_RETURN(d.w, arena.Filter(w.dims));
  TASO_CUDA_ASSIGN_OR_RETURN(d.y, arena.Tensor(y.dims, y.strides));
  TASO_CUDA_ASSIGN_OR_RETURN(d.conv, arena.Convolution());
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(
      cudnnSetConvolution2dDescriptor(d.conv, src.pad_h, src.pad_w, p.stride_h, p.stride_w, 1, 1,
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
      "cudnnSetConvolution2dDescriptor"));
  TASO_CUDA_RETURN_IF_ERROR(
      CudnnCall(cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(groups)), "cudnnSetConvolutionGroupCount"));
  TASO_CUDA_RETURN_IF_ERROR(
      CudnnCall(cudnnSetConvolutionMathType(d.conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType"));
  int on = 0, oc = 0, oh = 0, ow = 0;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &on, &oc, &oh, &ow),
                                      "cudnnGetConvolution2dForwardOutputDim"));
  if (std::vector<int64_t>{on, oc, oh, ow} != y.dims) {
    return absl::InternalError(absl::StrCat("cuda backend: ", s.key, ": cuDNN computes output ",
                                            DimsToString({on, oc, oh, ow}), ", shape inference ",
                                            DimsToString(y.dims)));
  }
  return d;
}

// The algorithm a convolution runs with, and its workspace.
struct ConvAlgorithm {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// cuDNN's fastest algorithm by its own search, run once on the real buffers,
// with the math type the search chose set on the descriptor.
absl::StatusOr<ConvAlgorithm> FindFastestAlgorithm(const CanonicalSignature& s, const ConvDescriptors& d,
                                                   const float* x_data, const float* w_data, float* out,
                                                   const DeviceContext& ctx, Arena& arena) {
  // Workspace for the search: the most any algorithm asks for, within half
  // of the free memory (algorithms that need more are skipped by the search).
  size_t workspace_bytes = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, d.x, d.w, d.conv, d.y,
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
      cudnnFindConvolutionForwardAlgorithmEx(ctx.cudnn, d.x, x_data, d.w, w_data, d.conv, d.y, out,
                                             static_cast<int>(perf.size()), &found, perf.data(), workspace,
                                             workspace_bytes),
      "cudnnFindConvolutionForwardAlgorithmEx"));
  // Results come sorted by time; take the fastest that ran.
  const cudnnConvolutionFwdAlgoPerf_t* best = nullptr;
  for (int i = 0; i < found && best == nullptr; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace_bytes) best = &perf[i];
  }
  if (best == nullptr) return Unsupported(s, "no cuDNN forward convolution algorithm supports this configuration");
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetConvolutionMathType(d.conv, best->mathType), "cudnnSetConvolutionMathType"));
  return ConvAlgorithm{best->algo, workspace, workspace_bytes};
}

// Everything a timed convolution call reads; steps hold a copy.
struct ConvCall {
  cudnnHandle_t cudnn = nullptr;
  ConvDescriptors d;
  ConvAlgorithm algorithm;
  const float* x_data = nullptr;
  const float* w_data = nullptr;
  float* out = nullptr;
};

Step ConvolutionStep(const ConvCall& c) {
  return [c] {
    return CudnnCall(cudnnConvolutionForward(c.cudnn, &kOne, c.d.x, c.x_data, c.d.w, c.w_data, c.d.conv,
                                             c.algorithm.algo, c.algorithm.workspace, c.algorithm.workspace_bytes,
                                             &kZero, c.d.y, c.out),
                     "cudnnConvolutionForward");
  };
}

// The whole conv + bias + activation as one cudnnConvolutionBiasActivationForward
// step of `plan`, where cuDNN fuses it (see Conv2D). False where it does not
// apply or cuDNN turns this configuration down.
absl::StatusOr<bool> TryFusedBiasActivation(const ConvCall& c, Activation activation, cudnnTensorDescriptor_t b_desc,
                                            const float* b_data, const DeviceContext& ctx, Arena& arena, Plan& plan) {
  const bool relu = activation == Activation::kRelu;
  const bool identity =
      activation == Activation::kNone && c.algorithm.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  if (!relu && !identity) return false;
  TASO_CUDA_ASSIGN_OR_RETURN(cudnnActivationDescriptor_t act,
                             arena.Activation(relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY));
  // y = act(1 * conv(x) + 0 * z + bias); z aliases y and is not read.
  Step fused = [c, b_desc, b_data, act] {
    return CudnnCall(cudnnConvolutionBiasActivationForward(c.cudnn, &kOne, c.d.x, c.x_data, c.d.w, c.w_data, c.d.conv,
                                                           c.algorithm.algo, c.algorithm.workspace,
                                                           c.algorithm.workspace_bytes, &kZero, c.d.y, c.out, b_desc,
                                                           b_data, act, c.d.y, c.out),
                     "cudnnConvolutionBiasActivationForward");
  };
  // One untimed trial: the fused kernel does not cover every
  // configuration the plain one does (cuDNN answers NOT_SUPPORTED or a
  // BAD_PARAM); then fall back to the separate kernels, which
  // report any real problem themselves.
  absl::Status trial = fused();
  if (trial.ok()) trial = CudaCall(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  if (trial.ok()) {
    plan.steps.push_back(std::move(fused));
    absl::StrAppend(&plan.kernel, " fused bias+", relu ? "RELU" : "IDENTITY", " (cudnnConvolutionBiasActivationForward)");
    return true;
  }
  if (!absl::IsUnimplemented(trial) && !absl::IsInvalidArgument(trial)) return trial;
  return false;
}

}  // namespace

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
  TASO_CUDA_ASSIGN_OR_RETURN(SpatialPadding ph, PaddingOf(p, 0, x.dims[2], w.dims[2]));
  TASO_CUDA_ASSIGN_OR_RETURN(SpatialPadding pw, PaddingOf(p, 1, x.dims[3], w.dims[3]));
  TASO_CUDA_ASSIGN_OR_RETURN(WindowInput src, PrepareWindowInput(x, in[0], ph, pw, 0.0f, ctx, arena));
  TASO_CUDA_ASSIGN_OR_RETURN(ConvDescriptors d, DescribeConvolution(s, src, arena));
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(y)));
  TASO_CUDA_ASSIGN_OR_RETURN(ConvAlgorithm algorithm, FindFastestAlgorithm(s, d, src.data, in[1], out, ctx, arena));

  const ConvCall call{ctx.cudnn, d, algorithm, src.data, in[1], out};
  Plan plan;
  plan.kernel = absl::StrCat("cudnn ", ConvAlgorithmName(algorithm.algo));
  plan.outputs = {out};
  const float* b_data = has_bias ? in[2] : nullptr;
  cudnnTensorDescriptor_t b_desc = nullptr;
  if (has_bias) {
    TASO_CUDA_ASSIGN_OR_RETURN(b_desc, arena.Tensor({1, y.dims[1], 1, 1}, {y.dims[1], 1, 1, 1}));
    TASO_CUDA_ASSIGN_OR_RETURN(bool fused, TryFusedBiasActivation(call, p.activation, b_desc, b_data, ctx, arena, plan));
    if (fused) return plan;
  }
  plan.steps.push_back(ConvolutionStep(call));
  if (has_bias) {
    // out += bias, broadcast over batch and space, before the activation.
    const cudnnHandle_t cudnn = ctx.cudnn;
    const cudnnTensorDescriptor_t y_desc = d.y;
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

}  // namespace taso::profiler::cuda
