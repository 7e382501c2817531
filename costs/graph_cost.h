// A graph's cost: every distinct operator configuration is measured once (one
// MeasureBatch); TASO's figure is the sum over the graph's operators, and the
// modelled figure adds what the backend's graph cost model says a runtime
// pays between kernels (graph_cost_model.h). `taso profile graph` and the
// calibration (bench/calibrate.sh) use it.
#ifndef TASO_COSTS_GRAPH_COST_H_
#define TASO_COSTS_GRAPH_COST_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "costs/client.h"
#include "costs/graph_cost_model.h"

namespace taso::profiler {

struct OperatorCost {
  std::string key;   // canonical signature
  int count = 0;     // operators in the graph with this signature
  Cost cost;         // when measured
  std::string error; // when not (e.g. an opaque operator): why
  int64_t output_bytes = 0;  // of one such operator
  OpKind kind = OpKind::kInput;
};

struct GraphCostReport {
  double total_ms = 0;      // sum over operators with a cost
  // With the backend's graph cost model: total_ms + per_node_ms x
  // kernel_operators + per_mb_ms x output_mb + weight_stream_ms.
  double modelled_ms = 0;
  double weight_mb = 0;         // distinct weights the run-time operators read (WeightWorkingSetBytes)
  double weight_stream_ms = 0;  // what the model charges for those that do not stay in cache
  GraphCostModel model;
  int kernel_operators = 0; // operators that run a kernel (measured time > 0)
  double output_mb = 0;     // what those write, in 10^6 bytes
  int operators = 0;        // operator nodes (inputs and weights excluded)
  int unmeasured = 0;       // operators without a cost (their time is not in total_ms)
  // Operators another backend measured for the one that answered (the cpu
  // backend's opaque ones, in ONNX Runtime: profiler.h), and their share of
  // total_ms: what that backend's whole-graph runner does not run.
  int delegated = 0;
  double delegated_ms = 0;
  bool any_estimate = false;
  std::vector<OperatorCost> distinct;  // in first-appearance order
  double request_ms = 0;    // wall time of the MeasureBatch call
};

// `threads`: the count the operators are measured at (MeasureRequest.threads;
// 0: the profiler's own).
absl::StatusOr<GraphCostReport> MeasureGraph(const Graph& graph, ProfilerClient& client,
                                             Backend backend = BACKEND_UNSPECIFIED, bool bypass_cache = false,
                                             int threads = 0);

// The same over any MeasureBatch (the profiler itself, for the per-operator
// sum it reports beside a whole-graph time); `who` names it in errors.
using MeasureBatchFn = std::function<absl::StatusOr<MeasureResponse>(const MeasureRequest&)>;
absl::StatusOr<GraphCostReport> SumOperatorCosts(const Graph& graph, const MeasureBatchFn& measure,
                                                 const std::string& who, Backend backend, bool bypass_cache,
                                                 int threads = 0);

}  // namespace taso::profiler

#endif  // TASO_COSTS_GRAPH_COST_H_
