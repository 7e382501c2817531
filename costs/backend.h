// A measurement backend: something that can run (or model) one operator on
// one device. The profiler owns caching and de-duplication; a backend only
// measures. Backends are not required to be thread-safe: the profiler runs
// one measurement at a time per backend, since two kernels timed at once on
// one device would disturb each other's figures.
#ifndef TASO_COSTS_BACKEND_H_
#define TASO_COSTS_BACKEND_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/graph.h"
#include "costs/signature.h"
#include "costs/timing.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {
// Backends by name, parsed here where the backend interface lives (flags,
// requests and cache keys all use these): "cuda", "cpu", "analytic", "ort",
// and "auto" for BACKEND_UNSPECIFIED.
const char* BackendName(Backend backend);
std::optional<Backend> BackendFromName(const std::string& name);
// What a --backend flag accepts, for its error message: "auto, cuda, cpu, analytic or ort".
std::string BackendChoices();

// A whole ONNX model for a backend that runs models: its bytes (a
// serialized ModelProto), or, when `path` is set, a file on this machine
// with any external data beside it (a model larger than one message).
struct OnnxModelSource {
  std::string bytes;
  std::string path;
};

class MeasureBackend {
 public:
  virtual ~MeasureBackend() = default;

  virtual Backend kind() const = 0;
  // The hardware and library build the numbers hold for, e.g.
  // "NVIDIA H100 80GB HBM3; cuDNN 9.19.0; cuBLAS 13.1.0". Part of every cache
  // key, so it must be stable across processes on the same machine.
  virtual const std::string& device() const = 0;
  // The CPU threads it measures at (its device names them too); 0 for a
  // backend that takes no thread count (cuda, analytic).
  virtual int threads() const { return 0; }

  // How this backend's operator times add up to a graph's time
  // (graph_cost_model.h). Zero terms by default: a plain sum.
  virtual GraphCostModel graph_cost_model() const { return {}; }

  // How many times the profiler times each operator it measures for a
  // request: the operators are timed once each, then again in reverse
  // order, and the fastest figure is kept. On a shared machine a kernel's
  // time moves by tens of percent for seconds at a time (a 2-thread GEMV
  // between two states 30 % apart), and the lower of two timings far apart
  // is the quiet machine's far more often than one timing is.
  virtual int timings_per_operator() const { return 1; }

  // Whether a split's parts alias its input here (readers take them with
  // strides, as in TASO: cost 0, never measured), or it is a copy kernel
  // that Measure times (ONNX Runtime).
  virtual bool splits_are_views() const { return true; }

  // Measures a canonical, validated signature (never a load-time constant).
  // UnimplementedError when this backend has no kernel for it (e.g. an
  // opaque operator, or an int32 tensor where only float32 is supported);
  // InvalidArgumentError for a signature the kernel library rejects.
  virtual absl::StatusOr<Measurement> Measure(const CanonicalSignature& signature,
                                              const TimingOptions& options) = 0;

  // Why this backend has no kernel for `signature` at all (an operator kind
  // or element type it never runs), when that is known without trying;
  // nullopt when Measure may. The profiler has ONNX Runtime measure such
  // operators for the cpu backend (profiler.h).
  virtual std::optional<std::string> NoKernelFor(const CanonicalSignature& signature) const {
    (void)signature;
    return std::nullopt;
  }

  // Runs whole graphs end to end and times them; with several graphs, timed
  // interleaved in one session so they can be compared (results[i] is for
  // graphs[i]; one graph that cannot run fails alone). CANCELLED when
  // `cancelled` (checked between runs) says so. Backends that cannot run
  // whole graphs answer UNIMPLEMENTED, saying so.
  virtual absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureGraphs(
      const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
      const std::function<bool()>& cancelled) {
    (void)graphs, (void)options, (void)cancelled;
    return absl::UnimplementedError(absl::StrCat("the ", Backend_Name(kind()),
                                                 " backend does not run whole graphs; use the cpu backend"));
  }

  // Times whole ONNX models (as a runtime reads them) as MeasureGraphs times graphs. Only a backend that runs ONNX itself
  // can; the others answer UNIMPLEMENTED.
  virtual absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureModels(
      const std::vector<OnnxModelSource>& onnx_models, const GraphTimingOptions& options,
      const std::function<bool()>& cancelled) {
    (void)onnx_models, (void)options, (void)cancelled;
    return absl::UnimplementedError(absl::StrCat("the ", Backend_Name(kind()),
                                                 " backend does not run ONNX models; use --backend ort"));
  }

  // Runs the ONNX models once each on the first one's deterministic random
  // inputs (from `seed`) and compares every later model's outputs with the
  // first's: result[i] is onnx_models[i + 1]'s comparison (a model that does
  // not run fails alone, in its entry). Only a backend that runs ONNX itself
  // can; the others answer UNIMPLEMENTED.
  virtual absl::StatusOr<std::vector<ModelComparison>> CompareModels(
      const std::vector<OnnxModelSource>& onnx_models, uint64_t seed) {
    (void)onnx_models, (void)seed;
    return absl::UnimplementedError(
        absl::StrCat("the ", Backend_Name(kind()), " backend does not run ONNX models, so it cannot compare outputs"));
  }
};

}  // namespace taso::profiler

#endif  // TASO_COSTS_BACKEND_H_
