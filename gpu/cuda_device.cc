#include "gpu/cuda_device.h"

#include <cuda_runtime_api.h>
#include <cublas_api.h>
#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace taso::gpu {
namespace {

// "13.0" from 13000; cudart encodes 1000*major + 10*minor.
std::string CudartVersionString(int v) { return absl::StrFormat("%d.%d", v / 1000, (v % 1000) / 10); }

}  // namespace

std::string CudaErrorText(int cuda_error) {
  const auto err = static_cast<cudaError_t>(cuda_error);
  return absl::StrFormat("%s (%s, %d)", cudaGetErrorString(err), cudaGetErrorName(err), cuda_error);
}

std::string DeviceInfo::ToString() const {
  return absl::StrFormat("%d: %s (sm_%d%d, %d SMs, %.1f GiB)", index, name, compute_major,
                         compute_minor, multiprocessor_count,
                         static_cast<double>(total_memory_bytes) / (1024.0 * 1024.0 * 1024.0));
}

absl::StatusOr<std::vector<DeviceInfo>> ListCudaDevices() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the (non-sticky) error so later calls start clean
    return absl::UnavailableError("no usable CUDA device: " + CudaErrorText(err));
  }
  if (count <= 0) {
    return absl::UnavailableError("no usable CUDA device: cudaGetDeviceCount found 0 devices");
  }
  std::vector<DeviceInfo> devices;
  devices.reserve(count);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    err = cudaGetDeviceProperties(&prop, i);
    if (err != cudaSuccess) {
      cudaGetLastError();
      return absl::UnavailableError(
          absl::StrFormat("no usable CUDA device: cudaGetDeviceProperties(%d): %s", i, CudaErrorText(err)));
    }
    DeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.total_memory_bytes = prop.totalGlobalMem;
    info.multiprocessor_count = prop.multiProcessorCount;
    devices.push_back(std::move(info));
  }
  return devices;
}

CudaLibraryVersionInfo GetCudaLibraryVersions() {
  CudaLibraryVersionInfo v;
  if (cudaRuntimeGetVersion(&v.cudart_runtime) != cudaSuccess) v.cudart_runtime = 0;
  // Returns 0 (and success) when no driver is installed.
  if (cudaDriverGetVersion(&v.cuda_driver) != cudaSuccess) v.cuda_driver = 0;
  cudaGetLastError();
  v.cudnn = static_cast<int>(cudnnGetVersion());
  v.cudnn_cudart = static_cast<int>(cudnnGetCudartVersion());
  // cublasGetProperty needs no handle, so no device either.
  if (cublasGetProperty(MAJOR_VERSION, &v.cublas_major) != CUBLAS_STATUS_SUCCESS) v.cublas_major = 0;
  if (cublasGetProperty(MINOR_VERSION, &v.cublas_minor) != CUBLAS_STATUS_SUCCESS) v.cublas_minor = 0;
  if (cublasGetProperty(PATCH_LEVEL, &v.cublas_patch) != CUBLAS_STATUS_SUCCESS) v.cublas_patch = 0;
  return v;
}

std::string CudaLibraryVersions() {
  const CudaLibraryVersionInfo v = GetCudaLibraryVersions();
  const std::string driver =
      v.cuda_driver > 0 ? absl::StrFormat("%s (%d)", CudartVersionString(v.cuda_driver), v.cuda_driver)
                        : std::string("none");
  // cuDNN 9 encodes 10000*major + 100*minor + patch.
  return absl::StrFormat(
      "CUDA runtime %s (%d), CUDA driver %s, cuDNN %d.%d.%d (%d, built for CUDA runtime %d), cuBLAS %d.%d.%d",
      CudartVersionString(v.cudart_runtime), v.cudart_runtime, driver, v.cudnn / 10000, (v.cudnn % 10000) / 100,
      v.cudnn % 100, v.cudnn, v.cudnn_cudart, v.cublas_major, v.cublas_minor, v.cublas_patch);
}

}  // namespace taso::gpu
