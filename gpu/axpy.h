// y = a * x + y on the GPU. A minimal CUDA kernel that exercises the nvcc
// genrule build and the cudart link; the profiler builds on the same setup.
#ifndef TASO_GPU_AXPY_H_
#define TASO_GPU_AXPY_H_

#include <vector>

#include "absl/status/status.h"

namespace taso::gpu {

// Computes y[i] = a * x[i] + y[i] on the current CUDA device.
// InvalidArgumentError if x and y differ in size; UnavailableError when there
// is no driver or device; InternalError for other CUDA failures. The message
// contains CUDA's error string. Empty inputs succeed without touching CUDA.
absl::Status RunAxpy(float a, const std::vector<float>& x, std::vector<float>& y);

}  // namespace taso::gpu

#endif  // TASO_GPU_AXPY_H_
