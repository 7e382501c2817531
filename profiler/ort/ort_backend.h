// The ort backend: operator costs and whole-graph times measured in ONNX
// Runtime's own CPU kernels (MLAS), the runtime users most often run the
// optimized model in. Each signature becomes a one-operator ONNX model
// (ort_model.h: weights as initializers, so ORT pre-packs them as in a real
// model) timed in the node worker (ort_worker.h) at the configured intra-op
// threads and graph optimization level, interleaved with a one-float model
// whose median, a session.run's fixed cost from node, is subtracted: an
// operator costs what it adds to a graph run. Whole graphs are exported as
// they are and timed interleaved, in four passes with the session creation
// order reversed in every other one (timing.h GraphTimingPasses).
//
// ORT runs what the other backends treat as views as kernels: a split is a
// copy and is timed as one; a transpose by strides and a reshape cost 0 (ORT
// folds the first into a matmul reading it, FusedMatMul, and reuses the
// buffer for the second).
//
// Opaque operators (ONNX operators the IR does not model) are timed the same
// way, each as the model of one node the signature describes
// (ort_opaque_model.h), on operands of any element type ORT takes.
#ifndef TASO_PROFILER_ORT_ORT_BACKEND_H_
#define TASO_PROFILER_ORT_ORT_BACKEND_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "costs/backend.h"
#include "profiler/ort/ort_opaque_model.h"
#include "profiler/ort/ort_worker.h"

namespace taso::profiler {

// ORT's graphOptimizationLevel.
enum class OrtOptimizationLevel { kDisabled, kBasic, kExtended, kLayout, kAll };
const char* OrtOptimizationLevelName(OrtOptimizationLevel level);
std::optional<OrtOptimizationLevel> OrtOptimizationLevelFromName(const std::string& name);

struct OrtBackendOptions {
  OrtWorkerOptions worker;
  // intraOpNumThreads; 0: RuntimeDefaultThreads() (costs/host_cpus.h), as
  // ONNX Runtime itself picks.
  int threads = 0;
  OrtOptimizationLevel level = OrtOptimizationLevel::kAll;
  // An operator with weights is timed as copies with weights of their own
  // until the weights total this many bytes (ort_model.h, SignatureGraph),
  // at most max_copies; its cost is the time per copy. 8 MB is past a
  // core's L2 and within a server's L3, where a model's weights are: eight
  // 512x512 matmuls measured 1.18-1.23x slower than their 512x4096 merge in
  // ORT with their weights there, 0.9x with one weight hot in L2.
  int64_t weight_bytes = int64_t{8} << 20;
  int max_copies = 16;
  // Each operator is timed this many times over a request, the fastest kept
  // (MeasureBackend::timings_per_operator); part of the device, so costs
  // timed once are not served for it. 1 halves a cold model's costing time.
  int timings = 2;
  // The graph cost model: ORT's own operator times already include what it
  // pays between kernels, so only a weight term (the calibration's
  // "ort_weights", calibration.h) is added for whole graphs.
  GraphCostModel graph_cost_model;
};

// The options as every tool's flags give them (--ort_worker, --ort_threads,
// --ort_level, --ort_timeout_s, --ort_weight_mb, --ort_timings);
// InvalidArgument naming the bad flag.
absl::StatusOr<OrtBackendOptions> OrtBackendOptionsFromFlags(const std::string& worker, int threads,
                                                             const std::string& level, int timeout_s,
                                                             int weight_mb, int timings);

class OrtBackend : public MeasureBackend {
 public:
  // Starts the worker and asks it what it runs. FAILED_PRECONDITION when
  // node, the worker or onnxruntime-node is missing (saying how to install
  // them); INVALID_ARGUMENT for threads < 0.
  static absl::StatusOr<std::unique_ptr<OrtBackend>> Create(const OrtBackendOptions& options);
  ~OrtBackend() override;

  Backend kind() const override { return BACKEND_ORT_CPU; }
  // "ort: onnxruntime 1.30.0 via node v20.20.2, cpu EP, 1 intra-op thread,
  // level all; AMD EPYC, 2 cpus; timing ort3, fastest of 2, weights 8 MiB"
  // (ort7 above one thread: ort_backend.cc, TimingMethod).
  const std::string& device() const override { return device_; }
  int threads() const override { return options_.threads; }
  GraphCostModel graph_cost_model() const override { return options_.graph_cost_model; }
  bool splits_are_views() const override { return false; }
  int timings_per_operator() const override { return options_.timings; }

  absl::StatusOr<Measurement> Measure(const CanonicalSignature& signature, const TimingOptions& options) override;
  // Every graph exported as a standalone model (opaque operators included:
  // ORT runs them) and timed in the worker; ViewPolicy does not apply.
  absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureGraphs(
      const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
      const std::function<bool()>& cancelled) override;
  // The models' files (their bytes written to files of their own, or the
  // paths given), timed as MeasureGraphs does.
  absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureModels(
      const std::vector<OnnxModelSource>& onnx_models, const GraphTimingOptions& options,
      const std::function<bool()>& cancelled) override;
  // The models' files, as above, run once each in the worker ("compare",
  // worker.js) at the configured threads and level, the sessions a user's
  // would be.
  absl::StatusOr<std::vector<ModelComparison>> CompareModels(const std::vector<OnnxModelSource>& onnx_models,
                                                             uint64_t seed) override;

 private:
  struct Timed {
    std::vector<double> times_ms;
    std::vector<std::string> kernels;  // ORT's op types, first-run order
    int nodes = 0;                     // nodes ORT ran per run
  };
  OrtBackend(const OrtBackendOptions& options, std::string model_dir);
  // The model one signature is timed as: an IR operator's SignatureGraph
  // (ort_model.h), an opaque one's OpaqueTimingModel (ort_opaque_model.h).
  // `nodes` operator nodes over `copies` weight sets.
  absl::StatusOr<OneOperatorModel> OperatorModel(const CanonicalSignature& signature, int copies, int nodes);
  // Writes `model` to a file of its own in model_dir_ and returns the path.
  absl::StatusOr<std::string> WriteModel(const std::string& model);
  // A path per model: the one given, or its bytes written by WriteModel.
  absl::StatusOr<std::vector<std::string>> ModelPaths(const std::vector<OnnxModelSource>& models);
  // Removes the files among `paths` this backend wrote (those in model_dir_);
  // files a caller named are the caller's.
  void RemoveWritten(const std::vector<std::string>& paths) const;
  // One worker "time" call over `paths` in this order.
  absl::StatusOr<std::vector<absl::StatusOr<Timed>>> Time(const std::vector<std::string>& paths, int warmup,
                                                          int min_runs, int max_runs, double min_ms);
  // Times the model files at `paths` interleaved, in four passes (every
  // other one in reverse order) when there are several, into `results` (entries
  // already failed are skipped); removes the files it wrote.
  absl::Status TimeInterleaved(const std::vector<std::string>& paths, const GraphTimingOptions& options,
                               const std::function<bool()>& cancelled,
                               std::vector<absl::StatusOr<GraphTiming>>& results);

  OrtBackendOptions options_;
  OrtWorker worker_;
  std::string model_dir_;
  // RunOverheadGraph's model file for (inputs, outputs), written on first use.
  absl::StatusOr<std::string> OverheadModel(int inputs, int outputs);
  std::map<std::pair<int, int>, std::string> overhead_models_;
  std::string device_;
  int64_t next_model_ = 0;
};

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_ORT_BACKEND_H_
