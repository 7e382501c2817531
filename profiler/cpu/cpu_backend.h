// The CPU measurement backend: every operator of the IR run on oneDNN
// kernels, timed with a steady clock on a fixed, pinned number of threads.
//
// Layout policy: convolutions let oneDNN choose its preferred (blocked)
// layouts for input, weights and output, as an inference runtime keeps
// them between layers, and the reorders into those layouts are not timed.
// Every other operator runs on the layouts (strides) its signature gives,
// so the row-/column-major choice of a matmul operand is measured as such.
// Transpose without shuffle and reshape of a row-major tensor are views:
// they cost 0 and run no kernel.
#ifndef TASO_PROFILER_CPU_CPU_BACKEND_H_
#define TASO_PROFILER_CPU_CPU_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/interpreter.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "costs/backend.h"

namespace taso::profiler {

struct CpuBackendOptions {
  // Threads oneDNN runs on; 0 means one per physical core this process may
  // use (RuntimeDefaultThreads, costs/host_cpus.h).
  int threads = 0;
  // Pin thread i to the i-th allowed core, so that repeated measurements
  // see the same cores and caches.
  bool pin_threads = true;
  // The graph cost model's calibration (calibration.h): "" the embedded
  // default, "none" none, else a JSON file.
  std::string calibration;
};

class CpuBackend : public MeasureBackend {
 public:
  // Fails if oneDNN cannot create a CPU engine, or (InvalidArgument) if the
  // calibration does not load.
  static absl::StatusOr<std::unique_ptr<CpuBackend>> Create(const CpuBackendOptions& options = {});
  ~CpuBackend() override;

  Backend kind() const override { return BACKEND_CPU; }
  // "cpu: AMD EPYC, 2 threads; oneDNN 2.6.3 (avx512_core_bf16); calibration
  // cpu_default@1a2b3c4d": a new calibration is a new device for the cache.
  const std::string& device() const override { return device_; }
  GraphCostModel graph_cost_model() const override { return graph_cost_model_; }
  int threads() const override { return threads_; }

  absl::StatusOr<Measurement> Measure(const CanonicalSignature& signature,
                                      const TimingOptions& options) override;
  // Opaque operators, and tensors other than float32.
  std::optional<std::string> NoKernelFor(const CanonicalSignature& signature) const override;

  // Whole graphs on the same thread, team and pinning as Measure (see
  // graph_runner.h).
  absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureGraphs(
      const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
      const std::function<bool()>& cancelled) override;

  // Runs `fn` on the thread every measurement runs from (its OpenMP team
  // sized and pinned as configured), with the backend's engine and stream.
  absl::Status RunOnMeasurementThread(
      const std::function<absl::Status(const dnnl::engine&, dnnl::stream&)>& fn);

  // Runs the kernel that Measure times once on the given values (logical
  // row-major, as the reference interpreter stores them) and returns its
  // outputs, so tests can check that the measured kernel is correct.
  absl::StatusOr<std::vector<FloatTensor>> Execute(const CanonicalSignature& signature,
                                                   const std::vector<FloatTensor>& inputs);

 private:
  struct State;
  CpuBackend(std::unique_ptr<State> state, int threads, std::string device, GraphCostModel graph_cost_model);

  std::unique_ptr<State> state_;
  int threads_;
  std::string device_;
  GraphCostModel graph_cost_model_;
};

}  // namespace taso::profiler

#endif  // TASO_PROFILER_CPU_CPU_BACKEND_H_
