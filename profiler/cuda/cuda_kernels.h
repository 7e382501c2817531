// Internal to the CUDA backend (cuda_backend.cc): turns one canonical
// signature into a Plan, the cuDNN / cuBLAS / copy calls that compute the
// operator once, with descriptors set, algorithms chosen and scratch memory
// allocated up front so that a timed repetition only enqueues kernels.
//
// Buffers hold each tensor in the layout its TensorType's strides describe
// (a transposed view really is column-major on the device), which is why
// every kernel here is handed strides rather than assuming row-major data.
//
// BuildPlan (cuda_kernels.cc) hands each operator to its kernel family's plan
// builder (cuda_plans.h, one cuda_*_kernels.cc per family); what they share
// lives in cuda_kernel_support.h, and status conversion, Arena and layout
// checks in cuda_backend.cc.
#ifndef TASO_PROFILER_CUDA_CUDA_KERNELS_H_
#define TASO_PROFILER_CUDA_CUDA_KERNELS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor_type.h"
#include "costs/signature.h"

#define TASO_CUDA_CONCAT_INNER(a, b) a##b
#define TASO_CUDA_CONCAT(a, b) TASO_CUDA_CONCAT_INNER(a, b)

// Returns the status of `expr` from the enclosing function unless it is OK.
#define TASO_CUDA_RETURN_IF_ERROR(expr)          \
  do {                                           \
    if (absl::Status taso_cuda_status = (expr);  \
        !taso_cuda_status.ok()) {                \
      return taso_cuda_status;                   \
    }                                            \
  } while (0)

// `lhs = value of expr`, or returns its error status.
#define TASO_CUDA_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto TASO_CUDA_CONCAT(taso_cuda_or_, __LINE__) = (expr);                      \
  if (!TASO_CUDA_CONCAT(taso_cuda_or_, __LINE__).ok()) {                        \
    return TASO_CUDA_CONCAT(taso_cuda_or_, __LINE__).status();                  \
  }                                                                             \
  lhs = *std::move(TASO_CUDA_CONCAT(taso_cuda_or_, __LINE__))

namespace taso::profiler::cuda {

// Library errors as absl::Status: "`what`: <library's error string>", with a
// code that says what kind of failure it was (Unimplemented for a
// configuration the library does not support, ResourceExhausted for memory,
// InvalidArgument for a rejected parameter, Internal otherwise).
absl::Status CudaCall(cudaError_t error, absl::string_view what);
absl::Status CudnnCall(cudnnStatus_t status, absl::string_view what);
absl::Status CublasCall(cublasStatus_t status, absl::string_view what);

// The handles every plan enqueues its work with; all bound to `stream`.
struct DeviceContext {
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
  cudaStream_t stream = nullptr;
};

// Owns the device memory and cuDNN descriptors of one measurement and frees
// them all when it goes out of scope, on every path.
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // `count` floats of zeroed device memory (nullptr when count is 0).
  absl::StatusOr<float*> Floats(int64_t count);
  absl::StatusOr<void*> Bytes(size_t bytes);

  // A float tensor descriptor with these dims and element strides; fewer
  // than 4 dims are padded with leading 1s (cuDNN rejects Nd descriptors of
  // rank < 3), more than 8 are Unimplemented.
  absl::StatusOr<cudnnTensorDescriptor_t> Tensor(const std::vector<int64_t>& dims,
                                                 const std::vector<int64_t>& strides);
  absl::StatusOr<cudnnFilterDescriptor_t> Filter(const std::vector<int64_t>& dims);  // OIHW, packed
  absl::StatusOr<cudnnConvolutionDescriptor_t> Convolution();
  absl::StatusOr<cudnnPoolingDescriptor_t> Pooling();
  absl::StatusOr<cudnnActivationDescriptor_t> Activation(cudnnActivationMode_t mode);
  absl::StatusOr<cudnnOpTensorDescriptor_t> OpTensor(cudnnOpTensorOp_t op);

 private:
  std::vector<std::function<void()>> releases_;  // run last-first
};

// One enqueued piece of device work.
using Step = std::function<absl::Status()>;

struct Plan {
  // Reported as Measurement::kernel, e.g. "cudnn IMPLICIT_PRECOMP_GEMM".
  std::string kernel;
  // True when the operator only reinterprets its input (a transpose that
  // changes strides, a reshape of a row-major tensor): no device work.
  bool is_view = false;
  // One repetition of the operator; everything that is timed.
  std::vector<Step> steps;
  // Device buffer of each output, in the output type's layout. A view's
  // output is its input buffer.
  std::vector<float*> outputs;
};

// Elements a buffer holding `t` in its layout spans (0 for an empty tensor).
int64_t LayoutExtent(const TensorType& t);

// Unimplemented unless this backend can run `signature`: float32 tensors in
// layouts with non-negative, non-overlapping strides, and an operator with a
// kernel here (not opaque, not a load-time constant).
absl::Status CheckSupported(const CanonicalSignature& signature);

// Builds the plan for a supported signature whose inputs are in `inputs`
// (one device buffer per input, in the input's layout). May run one-time
// preparation on the stream (padding copies, cuDNN's algorithm search).
absl::StatusOr<Plan> BuildPlan(const CanonicalSignature& signature, const std::vector<float*>& inputs,
                               const DeviceContext& context, Arena& arena);

}  // namespace taso::profiler::cuda

#endif  // TASO_PROFILER_CUDA_CUDA_KERNELS_H_
