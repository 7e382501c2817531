#include "profiler/cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/op.h"
#include "gpu/cuda_device.h"
#include "profiler/cuda/cuda_kernels.h"

namespace taso::profiler {

namespace cuda {
namespace {

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

absl::Status Unsupported(const CanonicalSignature& s, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("cuda backend: ", s.key, ": ", why));
}

}  // namespace

// --- Shared support for the kernels (declared in cuda_kernels.h). ---

absl::Status CudaCall(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  const std::string message = absl::StrCat(what, ": ", gpu::CudaErrorText(error));
  switch (error) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
      return absl::UnavailableError(message);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidPitchValue:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status CudnnCall(cudnnStatus_t status, absl::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  const std::string message = absl::StrCat(what, ": ", cudnnGetErrorString(status), " (", static_cast<int>(status),
                                           ")", detail[0] != '\0' ? absl::StrCat(": ", detail) : "");
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case CUDNN_STATUS_BAD_PARAM:
      return absl::InvalidArgumentError(message);
    case CUDNN_STATUS_NOT_SUPPORTED:
      return absl::UnimplementedError(message);
    default:
      if (status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
          status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED) {
        return absl::ResourceExhaustedError(message);
      }
      return absl::InternalError(message);
  }
}

absl::Status CublasCall(cublasStatus_t status, absl::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message = absl::StrCat(what, ": ", cublasGetStatusString(status), " (", static_cast<int>(status), ")");
  switch (status) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::InvalidArgumentError(message);
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return absl::UnimplementedError(message);
    default:
      return absl::InternalError(message);
  }
}

Arena::~Arena() {
  for (auto it = releases_.rbegin(); it != releases_.rend(); ++it) (*it)();
}

absl::StatusOr<void*> Arena::Bytes(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaMalloc(&ptr, bytes), absl::StrCat("cudaMalloc(", bytes, " bytes)")));
  releases_.push_back([ptr] { cudaFree(ptr); });
  return ptr;
}

absl::StatusOr<float*> Arena::Floats(int64_t count) {
  TASO_CUDA_ASSIGN_OR_RETURN(void* ptr, Bytes(static_cast<size_t>(count) * sizeof(float)));
  // Zeroed so that gaps in strided layouts and padding read as 0. cudaMemset
  // runs on the legacy stream, which the backend's (blocking) stream waits for.
  if (ptr != nullptr) TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaMemset(ptr, 0, count * sizeof(float)), "cudaMemset"));
  return static_cast<float*>(ptr);
}

absl::StatusOr<cudnnTensorDescriptor_t> Arena::Tensor(const std::vector<int64_t>& dims,
                                                      const std::vector<int64_t>& strides) {
  if (dims.size() > CUDNN_DIM_MAX) {
    return absl::UnimplementedError(absl::StrCat("cuDNN tensors have at most ", CUDNN_DIM_MAX, " dimensions, not ",
                                                 dims.size(), " ", DimsToString(dims)));
  }
  // Leading 1s take a stride past the whole tensor, like an outer dimension.
  int64_t span = 1;
  for (size_t i = 0; i < dims.size(); ++i) span = std::max(span, dims[i] * strides[i]);
  std::vector<int> d(4 > dims.size() ? 4 - dims.size() : 0, 1);
  std::vector<int> st(d.size(), static_cast<int>(std::min<int64_t>(span, INT_MAX)));
  for (size_t i = 0; i < dims.size(); ++i) {
    // cuDNN wants positive strides; a size-1 dimension's stride is never used.
    const int64_t stride = dims[i] == 1 && strides[i] <= 0 ? 1 : strides[i];
    if (!FitsInt(dims[i]) || !FitsInt(stride) || span > INT_MAX) {
      return absl::UnimplementedError(absl::StrCat("tensor ", DimsToString(dims), " with strides ",
                                                   DimsToString(strides), " exceeds cuDNN's 32-bit sizes"));
    }
    d.push_back(static_cast<int>(dims[i]));
    st.push_back(static_cast<int>(stride));
  }
  cudnnTensorDescriptor_t desc = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnCreateTensorDescriptor(&desc), "cudnnCreateTensorDescriptor"));
  releases_.push_back([desc] { cudnnDestroyTensorDescriptor(desc); });
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(
      cudnnSetTensorNdDescriptor(desc, CUDNN_DATA_FLOAT, static_cast<int>(d.size()), d.data(), st.data()),
      absl::StrCat("cudnnSetTensorNdDescriptor(", DimsToString(dims), ", strides ", DimsToString(strides), ")")));
  return desc;
}

absl::StatusOr<cudnnFilterDescriptor_t> Arena::Filter(const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (!FitsInt(d)) return absl::UnimplementedError("filter dimension exceeds cuDNN's 32-bit sizes");
  }
  cudnnFilterDescriptor_t desc = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnCreateFilterDescriptor(&desc), "cudnnCreateFilterDescriptor"));
  releases_.push_back([desc] { cudnnDestroyFilterDescriptor(desc); });
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(
      cudnnSetFilter4dDescriptor(desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, static_cast<int>(dims[0]),
                                 static_cast<int>(dims[1]), static_cast<int>(dims[2]), static_cast<int>(dims[3])),
      "cudnnSetFilter4dDescriptor"));
  return desc;
}

absl::StatusOr<cudnnConvolutionDescriptor_t> Arena::Convolution() {
  cudnnConvolutionDescriptor_t desc = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnCreateConvolutionDescriptor(&desc), "cudnnCreateConvolutionDescriptor"));
  releases_.push_back([desc] { cudnnDestroyConvolutionDescriptor(desc); });
  return desc;
}

absl::StatusOr<cudnnPoolingDescriptor_t> Arena::Pooling() {
  cudnnPoolingDescriptor_t desc = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnCreatePoolingDescriptor(&desc), "cudnnCreatePoolingDescriptor"));
  releases_.push_back([desc] { cudnnDestroyPoolingDescriptor(desc); });
  return desc;
}

absl::StatusOr<cudnnActivationDescriptor_t> Arena::Activation(cudnnActivationMode_t mode) {
  cudnnActivationDescriptor_t desc = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnCreateActivationDescriptor(&desc), "cudnnCreateActivationDescriptor"));
  releases_.push_back([desc] { cudnnDestroyActivationDescriptor(desc); });
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetActivationDescriptor(desc, mode, CUDNN_PROPAGATE_NAN, 0.0),
                                      "cudnnSetActivationDescriptor"));
  return desc;
}

absl::StatusOr<cudnnOpTensorDescriptor_t> Arena::OpTensor(cudnnOpTensorOp_t op) {
  cudnnOpTensorDescriptor_t desc = nullptr;
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnCreateOpTensorDescriptor(&desc), "cudnnCreateOpTensorDescriptor"));
  releases_.push_back([desc] { cudnnDestroyOpTensorDescriptor(desc); });
  TASO_CUDA_RETURN_IF_ERROR(CudnnCall(cudnnSetOpTensorDescriptor(desc, op, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN),
                                      "cudnnSetOpTensorDescriptor"));
  return desc;
}

int64_t LayoutExtent(const TensorType& t) {
  if (t.num_elements() == 0) return 0;
  int64_t last = 0;
  for (size_t i = 0; i < t.dims.size(); ++i) last += (t.dims[i] - 1) * t.strides[i];
  return last + 1;
}

namespace {

// Strides the kernels can address: non-negative and non-overlapping (each
// dimension, innermost first, steps past everything the inner ones reach).
absl::Status CheckLayout(const CanonicalSignature& s, const TensorType& t) {
  if (t.strides.size() != t.dims.size()) return Unsupported(s, absl::StrCat(t.ToString(), " has malformed strides"));
  std::vector<std::pair<int64_t, int64_t>> by_stride;  // (stride, dim) of dims > 1
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.strides[i] < 0) return Unsupported(s, absl::StrCat(t.ToString(), " has a negative stride"));
    if (t.dims[i] > 1) by_stride.emplace_back(t.strides[i], t.dims[i]);
  }
  std::sort(by_stride.begin(), by_stride.end());
  int64_t reach = 0;  // largest offset the inner dimensions address
  for (const auto& [stride, dim] : by_stride) {
    if (stride <= reach) return Unsupported(s, absl::StrCat(t.ToString(), " has overlapping strides"));
    reach += (dim - 1) * stride;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckSupported(const CanonicalSignature& s) {
  const OpKind kind = s.op.kind;
  if (kind == OpKind::kOpaque) {
    return Unsupported(s, absl::StrCat("opaque operator ", s.op.params.opaque.op_type, " has no CUDA kernel"));
  }
  if (IsLoadTimeConstant(kind) || kind == OpKind::kInput || kind == OpKind::kWeight) {
    return Unsupported(s, "not a run-time operator (constants and graph inputs cost nothing to run)");
  }
  auto check = [&](const TensorType& t) -> absl::Status {
    if (t.dtype != DType::kFloat32) {
      return Unsupported(s, absl::StrCat("only float32 is supported, not ", DTypeName(t.dtype), " (", t.ToString(), ")"));
    }
    return CheckLayout(s, t);
  };
  for (const TensorType& t : s.op.inputs) TASO_CUDA_RETURN_IF_ERROR(check(t));
  for (const TensorType& t : s.outputs) TASO_CUDA_RETURN_IF_ERROR(check(t));
  return absl::OkStatus();
}

}  // namespace cuda

using cuda::Arena;
using cuda::CudaCall;
using cuda::CublasCall;
using cuda::CudnnCall;
using cuda::Plan;

struct CudaBackend::DeviceState {
  int index = 0;
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;

  ~DeviceState() {
    cudaSetDevice(index);
    if (cublas != nullptr) cublasDestroy(cublas);
    if (cudnn != nullptr) cudnnDestroy(cudnn);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  cuda::DeviceContext context() const { return {cudnn, cublas, stream}; }
};

namespace {

absl::Status NoUsableDevice(const absl::Status& why) {
  return absl::UnavailableError(absl::StrCat("no usable CUDA device: ", why.message()));
}

// Waits for the stream when a measurement ends, on every path, so the
// arena (declared before this guard, hence destroyed after it) never frees
// memory a queued kernel still uses.
class StreamDrain {
 public:
  explicit StreamDrain(cudaStream_t stream) : stream_(stream) {}
  StreamDrain(const StreamDrain&) = delete;
  StreamDrain& operator=(const StreamDrain&) = delete;
  ~StreamDrain() {
    cudaStreamSynchronize(stream_);
    cudaGetLastError();
  }

 private:
  cudaStream_t stream_;
};

class CudaEvent {
 public:
  CudaEvent() = default;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  absl::Status Create() { return CudaCall(cudaEventCreate(&event_), "cudaEventCreate"); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

bool HasEmptyTensor(const CanonicalSignature& s) {
  for (const TensorType& t : s.op.inputs) {
    if (t.num_elements() == 0) return true;
  }
  for (const TensorType& t : s.outputs) {
    if (t.num_elements() == 0) return true;
  }
  return false;
}

// Calls fn(logical row-major index, offset in t's layout) for every element.
template <typename Fn>
void ForEachElement(const TensorType& t, Fn fn) {
  const int rank = t.rank();
  const int64_t total = t.num_elements();
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, offset);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < t.dims[d]) {
        offset += t.strides[d];
        break;
      }
      offset -= t.strides[d] * (t.dims[d] - 1);
      index[d] = 0;
    }
  }
}

// Deterministic values in [lo, hi): the kernels' timings must not depend on
// the run, and denormals or NaNs would skew them.
std::vector<float> RandomValues(int64_t count, uint64_t seed, float lo, float hi) {
  std::vector<float> values(count);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& v : values) {
    // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = lo + (hi - lo) * static_cast<float>(z >> 40) / static_cast<float>(1ull << 24);
  }
  return values;
}

absl::Status Upload(const std::vector<float>& host, float* device, cudaStream_t stream) {
  if (host.empty()) return absl::OkStatus();
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(
      cudaMemcpyAsync(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, stream),
      "cudaMemcpyAsync(host to device)"));
  // `host` is pageable and may go away when we return.
  return CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

absl::Status RunSteps(const Plan& plan) {
  for (const cuda::Step& step : plan.steps) TASO_CUDA_RETURN_IF_ERROR(step());
  return absl::OkStatus();
}

}  // namespace

CudaBackend::CudaBackend(std::unique_ptr<DeviceState> state, std::string device)
    : state_(std::move(state)), device_(std::move(device)) {}

CudaBackend::~CudaBackend() = default;

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(int device_index) {
  const auto devices = gpu::ListCudaDevices();
  if (!devices.ok()) return devices.status();  // already "no usable CUDA device: ..."
  if (device_index < 0 || device_index >= static_cast<int>(devices->size())) {
    return absl::UnavailableError(absl::StrFormat("no usable CUDA device: device index %d requested, %d present",
                                                  device_index, devices->size()));
  }
  const gpu::DeviceInfo& info = (*devices)[device_index];
  auto state = std::make_unique<DeviceState>();
  state->index = device_index;
  if (absl::Status s = CudaCall(cudaSetDevice(device_index), "cudaSetDevice"); !s.ok()) return NoUsableDevice(s);
  // A blocking stream: it waits for the legacy stream, where Arena zeroes
  // new buffers.
  if (absl::Status s = CudaCall(cudaStreamCreate(&state->stream), "cudaStreamCreate"); !s.ok()) {
    return NoUsableDevice(s);
  }
  if (absl::Status s = CudnnCall(cudnnCreate(&state->cudnn), "cudnnCreate"); !s.ok()) return NoUsableDevice(s);
  if (absl::Status s = CudnnCall(cudnnSetStream(state->cudnn, state->stream), "cudnnSetStream"); !s.ok()) return s;
  if (absl::Status s = CublasCall(cublasCreate(&state->cublas), "cublasCreate"); !s.ok()) return NoUsableDevice(s);
  if (absl::Status s = CublasCall(cublasSetStream(state->cublas, state->stream), "cublasSetStream"); !s.ok()) return s;
  // Default math: SGEMM stays in IEEE float32 (no TF32), like the cuDNN
  // convolutions (see cuda_kernels.cc), so costs are of float32 operators.
  if (absl::Status s = CublasCall(cublasSetMathMode(state->cublas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
      !s.ok()) {
    return s;
  }
  const gpu::CudaLibraryVersionInfo v = gpu::GetCudaLibraryVersions();
  std::string device = absl::StrFormat("%s (sm_%d%d); cuDNN %d.%d.%d; cuBLAS %d.%d.%d", info.name, info.compute_major,
                                       info.compute_minor, v.cudnn / 10000, (v.cudnn % 10000) / 100, v.cudnn % 100,
                                       v.cublas_major, v.cublas_minor, v.cublas_patch);
  return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(state), std::move(device)));
}

absl::StatusOr<std::unique_ptr<MeasureBackend>> CreateCudaBackend(int device_index) {
  auto backend = CudaBackend::Create(device_index);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<MeasureBackend>(std::move(*backend));
}

absl::StatusOr<Measurement> CudaBackend::Measure(const CanonicalSignature& signature, const TimingOptions& options) {
  TASO_CUDA_RETURN_IF_ERROR(cuda::CheckSupported(signature));
  if (HasEmptyTensor(signature)) {
    Measurement empty;
    empty.kernel = "empty";  // nothing to compute
    return empty;
  }
  // The calling thread may not be the one that created the backend.
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaSetDevice(state_->index), "cudaSetDevice"));
  const cudaStream_t stream = state_->stream;
  Arena arena;
  StreamDrain drain(stream);

  std::vector<float*> inputs;
  for (size_t i = 0; i < signature.op.inputs.size(); ++i) {
    const int64_t extent = cuda::LayoutExtent(signature.op.inputs[i]);
    TASO_CUDA_ASSIGN_OR_RETURN(float* buffer, arena.Floats(extent));
    // A batchnorm variance must be positive; everything else is in [-1, 1].
    const bool variance = signature.op.kind == OpKind::kBatchNorm && i == 4;
    TASO_CUDA_RETURN_IF_ERROR(
        Upload(RandomValues(extent, i + 1, variance ? 0.5f : -1.0f, variance ? 1.5f : 1.0f), buffer, stream));
    inputs.push_back(buffer);
  }
  TASO_CUDA_ASSIGN_OR_RETURN(Plan plan, cuda::BuildPlan(signature, inputs, state_->context(), arena));
  Measurement result;
  if (plan.is_view) {
    result.kernel = plan.kernel;  // no device work: costs 0, repetitions 0
    return result;
  }

  // Warm-up also absorbs cuDNN's lazy loading of kernels and cache effects.
  for (int i = 0; i < options.warmup; ++i) TASO_CUDA_RETURN_IF_ERROR(RunSteps(plan));
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));

  CudaEvent start, stop;
  TASO_CUDA_RETURN_IF_ERROR(start.Create());
  TASO_CUDA_RETURN_IF_ERROR(stop.Create());
  std::vector<double> samples_ms;
  double elapsed_ms = 0;
  do {  // at least one timed repetition, whatever the options
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaEventRecord(start.get(), stream), "cudaEventRecord"));
    TASO_CUDA_RETURN_IF_ERROR(RunSteps(plan));
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaEventRecord(stop.get(), stream), "cudaEventRecord"));
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaEventSynchronize(stop.get()), "cudaEventSynchronize"));
    float ms = 0;
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime"));
    samples_ms.push_back(ms);
    elapsed_ms += ms;
  } while (!EnoughRepetitions(options, static_cast<int>(samples_ms.size()), elapsed_ms));

  result = Summarize(std::move(samples_ms));
  result.kernel = plan.kernel;
  return result;
}

absl::StatusOr<std::vector<FloatTensor>> CudaBackend::Execute(const CanonicalSignature& signature,
                                                              const std::vector<FloatTensor>& inputs) {
  TASO_CUDA_RETURN_IF_ERROR(cuda::CheckSupported(signature));
  if (inputs.size() != signature.op.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Execute: ", signature.key, " takes ", signature.op.inputs.size(),
                                                   " inputs, got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& type = signature.op.inputs[i];
    if (inputs[i].type.dims != type.dims || static_cast<int64_t>(inputs[i].data.size()) != type.num_elements()) {
      return absl::InvalidArgumentError(absl::StrCat("Execute: input ", i, " has shape ",
                                                     DimsToString(inputs[i].type.dims), " and ", inputs[i].data.size(),
                                                     " values; the signature wants ", type.ToString()));
    }
  }
  if (HasEmptyTensor(signature)) {
    return absl::UnimplementedError(absl::StrCat("Execute: ", signature.key, " has an empty tensor: nothing runs"));
  }
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaSetDevice(state_->index), "cudaSetDevice"));
  const cudaStream_t stream = state_->stream;
  Arena arena;
  StreamDrain drain(stream);

  // Inputs go to the device in their layouts: values are logical row-major.
  std::vector<float*> device_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& type = signature.op.inputs[i];
    std::vector<float> staged(cuda::LayoutExtent(type), 0.0f);
    ForEachElement(type, [&](int64_t logical, int64_t offset) { staged[offset] = inputs[i].data[logical]; });
    TASO_CUDA_ASSIGN_OR_RETURN(float* buffer, arena.Floats(staged.size()));
    TASO_CUDA_RETURN_IF_ERROR(Upload(staged, buffer, stream));
    device_inputs.push_back(buffer);
  }
  TASO_CUDA_ASSIGN_OR_RETURN(Plan plan, cuda::BuildPlan(signature, device_inputs, state_->context(), arena));
  TASO_CUDA_RETURN_IF_ERROR(RunSteps(plan));
  TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));

  std::vector<FloatTensor> outputs;
  for (size_t i = 0; i < signature.outputs.size(); ++i) {
    const TensorType& type = signature.outputs[i];
    std::vector<float> staged(cuda::LayoutExtent(type));
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaMemcpyAsync(staged.data(), plan.outputs[i], staged.size() * sizeof(float),
                                                       cudaMemcpyDeviceToHost, stream),
                                       "cudaMemcpyAsync(device to host)"));
    TASO_CUDA_RETURN_IF_ERROR(CudaCall(cudaStreamSynchronize(stream), "cudaStreamSynchronize"));
    FloatTensor out;
    out.type = type;
    out.data.resize(type.num_elements());
    ForEachElement(type, [&](int64_t logical, int64_t offset) { out.data[logical] = staged[offset]; });
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace taso::profiler
