// Internal to the CUDA backend: what the plan builders of every kernel
// family share (layout arithmetic, strided copies, fused activations, the
// padded input of window operators). The builders themselves are declared in
// cuda_plans.h; see cuda_kernels.h for the layout conventions.
#ifndef TASO_PROFILER_CUDA_CUDA_KERNEL_SUPPORT_H_
#define TASO_PROFILER_CUDA_CUDA_KERNEL_SUPPORT_H_

#include <cudnn.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/op.h"
#include "core/tensor_type.h"
#include "profiler/cuda/cuda_kernels.h"
#include "costs/signature.h"

namespace taso::profiler::cuda {

// cuDNN and cuBLAS read their scaling factors from host memory.
inline constexpr float kOne = 1.0f;
inline constexpr float kZero = 0.0f;

// The number of elements of a dense tensor of `dims`.
int64_t Product(const std::vector<int64_t>& dims);

// Whether a library's 32-bit int parameter can hold `v`.
bool FitsInt(int64_t v);

// Row-major up to the strides of size-1 dimensions, which address nothing:
// element i of the logical order sits at offset i.
bool IsDenseRowMajor(const TensorType& t);

// Unimplemented, naming the signature: this backend cannot run it.
absl::Status Unsupported(const CanonicalSignature& s, absl::string_view why);

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
Loop Simplify(const Loop& in, bool reorder);

// Dims as an operand with stride 0 (broadcast) sees them: 1 there.
std::vector<int64_t> BroadcastDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

// `t`'s strides aligned to the last dims of an output of `out_dims` (numpy
// broadcasting), with 0 wherever t is broadcast.
std::vector<int64_t> AlignedStrides(const TensorType& t, const std::vector<int64_t>& out_dims);

// "a x3" when every part ran the same kernel, else "a + b".
std::string JoinKernels(const std::vector<std::string>& parts);

// One copy, and the kernel that does it (for Plan::kernel).
struct CopyStep {
  Step step;
  std::string kernel;
};

// dst = src for a tensor of `dims` held in two layouts. Contiguous rows go
// through cudaMemcpy{,2D,3D}Async; anything else through cudnnTransformTensor.
absl::StatusOr<CopyStep> StridedCopy(const DeviceContext& ctx, Arena& arena, const std::vector<int64_t>& dims,
                                     const float* src, const std::vector<int64_t>& src_strides, float* dst,
                                     const std::vector<int64_t>& dst_strides);

// Runs a one-time preparation step now (not part of the timed repetition).
absl::Status RunNow(const absl::StatusOr<CopyStep>& copy);

// Zeroes `count` floats at `dst`, as a timed step.
Step MemsetStep(const DeviceContext& ctx, float* dst, int64_t count);

// How a plan's kernel string names a cuDNN activation mode.
const char* ActivationModeName(cudnnActivationMode_t mode);

// y = act(x) over `count` contiguous elements (in place when x == y, which
// cuDNN allows for identical descriptors).
absl::StatusOr<Step> FlatActivation(const DeviceContext& ctx, Arena& arena, cudnnActivationMode_t mode,
                                    const float* x, float* y, int64_t count);

// cuDNN's mode for a fused activation; nullopt for none.
std::optional<cudnnActivationMode_t> ActivationMode(Activation a);

// Appends the fused-activation parameter of conv2d / matmul, applied in place
// on the output after the main kernel, inside the timed repetition.
absl::Status AppendActivation(const DeviceContext& ctx, Arena& arena, Activation a, float* out, int64_t count,
                              Plan& plan);

}  // namespace taso::profiler::cuda

#endif  // TASO_PROFILER_CUDA_CUDA_KERNEL_SUPPORT_H_
