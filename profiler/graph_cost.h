// A graph's cost under TASO's model: every distinct operator configuration is
// measured once (one MeasureBatch), and the graph costs the sum over its
// operators. The optimizer and `taso profile graph` use it.
#ifndef TASO_PROFILER_GRAPH_COST_H_
#define TASO_PROFILER_GRAPH_COST_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "profiler/client.h"

namespace taso::profiler {

struct OperatorCost {
  std::string key;   // canonical signature
  int count = 0;     // operators in the graph with this signature
  Cost cost;         // when measured
  std::string error; // when not (e.g. an opaque operator): why
};

struct GraphCostReport {
  double total_ms = 0;      // sum over operators with a cost
  int operators = 0;        // operator nodes (inputs and weights excluded)
  int unmeasured = 0;       // operators without a cost (their time is not in total_ms)
  bool any_estimate = false;
  std::vector<OperatorCost> distinct;  // in first-appearance order
  double request_ms = 0;    // wall time of the MeasureBatch call
};

absl::StatusOr<GraphCostReport> MeasureGraph(const Graph& graph, ProfilerClient& client,
                                             Backend backend = BACKEND_UNSPECIFIED, bool bypass_cache = false);

// The same over any MeasureBatch (the profiler itself, for the per-operator
// sum it reports beside a whole-graph time); `who` names it in errors.
using MeasureBatchFn = std::function<absl::StatusOr<MeasureResponse>(const MeasureRequest&)>;
absl::StatusOr<GraphCostReport> SumOperatorCosts(const Graph& graph, const MeasureBatchFn& measure,
                                                 const std::string& who, Backend backend, bool bypass_cache);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_GRAPH_COST_H_
