// Tiny CUDA kernels compiled by nvcc through a genrule (see BUILD.bazel).
//
// The host entry points are extern "C" and return a cudaError_t as int, so no
// absl (or other project) header goes through nvcc; gpu/axpy.cc wraps them in
// absl::Status.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace {

__global__ void AxpyKernel(float a, const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = a * x[i] + y[i];
  }
}

// Frees device memory on every return path.
struct DeviceBuffer {
  float* ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr != nullptr) cudaFree(ptr);
  }
};

}  // namespace

// y[i] = a * x[i] + y[i] for i in [0, n), with host x and y.
// Returns a cudaError_t (cudaSuccess == 0).
extern "C" int taso_axpy(float a, const float* x, float* y, size_t n) {
  if (n == 0) return cudaSuccess;
  const size_t bytes = n * sizeof(float);
  DeviceBuffer dx, dy;
  cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&dx.ptr), bytes);
  if (err != cudaSuccess) return err;
  err = cudaMalloc(reinterpret_cast<void**>(&dy.ptr), bytes);
  if (err != cudaSuccess) return err;
  err = cudaMemcpy(dx.ptr, x, bytes, cudaMemcpyHostToDevice);
  if (err != cudaSuccess) return err;
  err = cudaMemcpy(dy.ptr, y, bytes, cudaMemcpyHostToDevice);
  if (err != cudaSuccess) return err;

  constexpr int kThreads = 256;
  const size_t wanted_blocks = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(wanted_blocks < 4096 ? wanted_blocks : 4096);  // grid-stride loop covers the rest
  AxpyKernel<<<blocks, kThreads>>>(a, dx.ptr, dy.ptr, static_cast<int64_t>(n));
  err = cudaGetLastError();  // launch errors (e.g. no kernel image for this GPU)
  if (err != cudaSuccess) return err;
  err = cudaDeviceSynchronize();  // execution errors
  if (err != cudaSuccess) return err;
  return cudaMemcpy(y, dy.ptr, bytes, cudaMemcpyDeviceToHost);
}
