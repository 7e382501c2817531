#include "gpu/axpy.h"

#include <cstddef>

#include <cuda_runtime_api.h>

#include "absl/strings/str_format.h"
#include "gpu/cuda_device.h"

// Defined in gpu/axpy_kernel.cu (compiled by nvcc); returns a cudaError_t.
extern "C" int taso_axpy(float a, const float* x, float* y, size_t n);

namespace taso::gpu {

absl::Status RunAxpy(float a, const std::vector<float>& x, std::vector<float>& y) {
  if (x.size() != y.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("RunAxpy: x has %d elements but y has %d", x.size(), y.size()));
  }
  if (x.empty()) return absl::OkStatus();
  const auto err = static_cast<cudaError_t>(taso_axpy(a, x.data(), y.data(), x.size()));
  if (err == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();  // clear non-sticky errors for the next caller
  const std::string message = "RunAxpy: " + CudaErrorText(err);
  switch (err) {
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
      return absl::UnavailableError(message);
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace taso::gpu
