// The CUDA backend of a build without CUDA (--define=cuda=off): nothing of
// cudart, cuDNN or cuBLAS is linked, and CreateCudaBackend says why there is
// no CUDA backend, as a build with CUDA does on a machine without a GPU.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "profiler/cuda/cuda_backend.h"

namespace taso::profiler {
namespace {

absl::Status NoCuda() {
  return absl::UnavailableError("no usable CUDA device: this build has no CUDA (built with --define=cuda=off)");
}

}  // namespace

struct CudaBackend::DeviceState {};

CudaBackend::CudaBackend(std::unique_ptr<DeviceState> state, std::string device)
    : state_(std::move(state)), device_(std::move(device)) {}

CudaBackend::~CudaBackend() = default;

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(int) { return NoCuda(); }

absl::StatusOr<Measurement> CudaBackend::Measure(const CanonicalSignature&, const TimingOptions&) { return NoCuda(); }

absl::StatusOr<std::vector<FloatTensor>> CudaBackend::Execute(const CanonicalSignature&,
                                                              const std::vector<FloatTensor>&) {
  return NoCuda();
}

absl::StatusOr<std::unique_ptr<MeasureBackend>> CreateCudaBackend(int) { return NoCuda(); }

}  // namespace taso::profiler
