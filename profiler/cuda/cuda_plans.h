// Internal to the CUDA backend: one plan builder per kernel family, each for
// a supported signature whose inputs are in `in` (one device buffer per
// input, in the input's layout). BuildPlan (cuda_kernels.cc) picks one by
// operator kind.
#ifndef TASO_PROFILER_CUDA_CUDA_PLANS_H_
#define TASO_PROFILER_CUDA_CUDA_PLANS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "profiler/cuda/cuda_kernels.h"
#include "costs/signature.h"

namespace taso::profiler::cuda {

// relu, tanh, sigmoid (cuda_elementwise_kernels.cc).
absl::StatusOr<Plan> Activate(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                              Arena& arena);
// ewadd, ewmul, smul (cuda_elementwise_kernels.cc).
absl::StatusOr<Plan> Elementwise(const CanonicalSignature& s, const std::vector<float*>& in,
                                 const DeviceContext& ctx, Arena& arena);
// batchnorm, inference (cuda_elementwise_kernels.cc).
absl::StatusOr<Plan> BatchNorm(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                               Arena& arena);
// conv2d (cuda_conv_kernels.cc).
absl::StatusOr<Plan> Conv2D(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                            Arena& arena);
// poolavg, poolmax (cuda_conv_kernels.cc).
absl::StatusOr<Plan> Pool(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                          Arena& arena);
// matmul (cuda_matmul_kernels.cc).
absl::StatusOr<Plan> MatMul(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                            Arena& arena);
// transpose, reshape, concat, split, enlarge, merge_gconv
// (cuda_data_movement_kernels.cc).
absl::StatusOr<Plan> DataMovement(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                                  Arena& arena);

}  // namespace taso::profiler::cuda

#endif  // TASO_PROFILER_CUDA_CUDA_PLANS_H_
