// CUDA device discovery and library version reporting.
//
// Everything here links against cudart, cuBLAS and cuDNN only, never against
// libcuda.so (the driver): cudart loads the driver lazily, so binaries built on
// this library start on CPU-only machines and ListCudaDevices() reports why
// there is no device instead of the process failing to load.
#ifndef TASO_GPU_CUDA_DEVICE_H_
#define TASO_GPU_CUDA_DEVICE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::gpu {

// "message (cudaErrorName, code)" for a cudaError_t value.
std::string CudaErrorText(int cuda_error);

struct DeviceInfo {
  int index = 0;                // CUDA device ordinal
  std::string name;             // e.g. "NVIDIA H100 80GB HBM3"
  int compute_major = 0;        // compute capability, e.g. 9 for sm_90
  int compute_minor = 0;
  std::size_t total_memory_bytes = 0;
  int multiprocessor_count = 0;  // number of SMs

  // "0: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)"
  std::string ToString() const;
};

// All visible CUDA devices. Returns absl::UnavailableError when there is no
// driver or no device; the message starts with "no usable CUDA device: " and
// contains CUDA's own error string, e.g. "CUDA driver version is insufficient
// for CUDA runtime version".
absl::StatusOr<std::vector<DeviceInfo>> ListCudaDevices();

// Versions of the CUDA libraries this binary loaded. All of them are queried
// without a device (no cuBLAS handle, no cuDNN handle), so this works on
// CPU-only machines. Versions are CUDA's integer encodings.
struct CudaLibraryVersionInfo {
  int cudart_runtime = 0;  // cudaRuntimeGetVersion: 1000*major + 10*minor, e.g. 13000
  int cuda_driver = 0;     // cudaDriverGetVersion: 0 when no driver is installed
  int cudnn = 0;           // cudnnGetVersion: 10000*major + 100*minor + patch (cuDNN 9), e.g. 91900
  int cudnn_cudart = 0;    // cudnnGetCudartVersion: the cudart cuDNN was built against
  int cublas_major = 0;    // cublasGetProperty(MAJOR_VERSION, ...)
  int cublas_minor = 0;
  int cublas_patch = 0;
};
CudaLibraryVersionInfo GetCudaLibraryVersions();

// One line for logs and --version, e.g.
// "CUDA runtime 13.0 (13000), CUDA driver none, cuDNN 9.19.0 (91900, built for
// CUDA runtime 13000), cuBLAS 13.1.0".
std::string CudaLibraryVersions();

}  // namespace taso::gpu

#endif  // TASO_GPU_CUDA_DEVICE_H_
