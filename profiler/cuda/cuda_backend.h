// The CUDA measurement backend: times one operator with cuDNN / cuBLAS on one
// GPU. Tensors live on the device in the layout their TensorType's strides
// describe, so a column-major operand really is read column-major.
//
// Links cudart, cuDNN and cuBLAS only (never libcuda.so): on a machine without
// a GPU or driver the binary still starts and CreateCudaBackend says why it
// cannot measure.
#ifndef TASO_PROFILER_CUDA_CUDA_BACKEND_H_
#define TASO_PROFILER_CUDA_CUDA_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/interpreter.h"
#include "costs/backend.h"
#include "costs/signature.h"
#include "costs/timing.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

class CudaBackend final : public MeasureBackend {
 public:
  // UnavailableError, with a message starting "no usable CUDA device: " and
  // CUDA's reason, when there is no driver, no device, or no such index.
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(int device_index = 0);
  ~CudaBackend() override;

  Backend kind() const override { return BACKEND_CUDA; }
  // e.g. "NVIDIA H100 80GB HBM3 (sm_90); cuDNN 9.19.0; cuBLAS 13.1.0".
  const std::string& device() const override { return device_; }

  // Allocates the buffers once, fills the inputs with random values, runs
  // options.warmup untimed repetitions, then times repetitions one by one
  // with CUDA events until EnoughRepetitions. Views (a transpose that only
  // changes strides, a reshape of a row-major tensor) cost 0 with
  // repetitions 0 and kernel "view". Float32 only: other element types and
  // opaque operators are UnimplementedError.
  absl::StatusOr<Measurement> Measure(const CanonicalSignature& signature, const TimingOptions& options) override;

  // Runs the operator once, with the kernels Measure times, on `inputs`
  // (values in logical row-major order, one per signature input) and returns
  // the outputs in logical row-major order with the signature's output
  // types. For checking the measured kernels against the reference
  // interpreter.
  absl::StatusOr<std::vector<FloatTensor>> Execute(const CanonicalSignature& signature,
                                                   const std::vector<FloatTensor>& inputs);

 private:
  struct DeviceState;  // CUDA handles; keeps CUDA headers out of this one
  CudaBackend(std::unique_ptr<DeviceState> state, std::string device);

  std::unique_ptr<DeviceState> state_;
  std::string device_;
};

// CudaBackend::Create behind the MeasureBackend interface.
absl::StatusOr<std::unique_ptr<MeasureBackend>> CreateCudaBackend(int device_index = 0);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_CUDA_CUDA_BACKEND_H_
