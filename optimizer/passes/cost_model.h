// The cost model for both searches: a graph costs the sum of its operators'
// costs, each its measured kernel time plus what the backend's graph cost
// model (costs/graph_cost_model.h: per-operator dispatch, output bytes
// written and read back) adds for an operator that runs a kernel. TASO's model
// is the special case with both terms zero. Each distinct signature is asked
// of the profiler once per optimization (one MeasureBatch for every new
// signature of a graph) and remembered, so exploring thousands of candidate
// graphs costs a handful of requests. Operators computed from weights only
// cost 0: they are folded before the model runs (FoldedAtLoad). A whole graph also pays
// for weights that no longer fit in cache (graph_cost_model.h's weight
// term): GraphCost includes it; SignatureCosts, priced operator by operator
// for the e-graph, cannot, so eqsat checks its extracted graph by GraphCost.
#ifndef TASO_OPTIMIZER_PASSES_COST_MODEL_H_
#define TASO_OPTIMIZER_PASSES_COST_MODEL_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "costs/client.h"
#include "costs/graph_cost_model.h"
#include "costs/signature.h"

namespace taso::optimizer {

// For each node, whether the runtime computes it once, when it loads the
// model, so it costs nothing per run: ComputedAtLoad (core/graph.h: weights,
// and IR operators of them), and the opaque operators ONNX Runtime's constant
// folding computes: a Shape of a tensor whose dimensions are all known, and
// a deterministic operator without a subgraph whose inputs are all computed
// at load (the shape arithmetic a PyTorch export feeds Expand and Reshape).
std::vector<bool> FoldedAtLoad(const Graph& graph);
// That rule for one opaque operator, given its inputs' types and whether
// each is computed at load.
bool RuntimeFoldsOpaque(const OpaqueInfo& op, const std::vector<TensorType>& inputs,
                        const std::vector<bool>& inputs_at_load);

// A graph's cost in its two parts: what its operators cost one by one (with
// the graph cost model's per-operator terms), and what the whole graph pays
// for weights that do not stay in cache.
struct GraphCostParts {
  double operators_ms = 0;
  double weights_ms = 0;
  double total_ms() const { return operators_ms + weights_ms; }
};

class CostModel {
 public:
  // `client` must outlive the model. `threads`: what the model will run
  // with, the costs measured at it (0: the profiler's own count).
  CostModel(profiler::ProfilerClient* client, profiler::Backend backend = profiler::BACKEND_UNSPECIFIED,
            int threads = 0);

  // Milliseconds. Fails only when the profiler cannot be reached or refuses
  // the whole request; operators it cannot measure (opaque ones) cost 0 and
  // are counted in unmeasured().
  absl::StatusOr<double> GraphCost(const Graph& graph);
  // The same, in its parts (GraphCost is their total).
  absl::StatusOr<GraphCostParts> GraphCostInParts(const Graph& graph);
  // Milliseconds for each signature as an operator of a graph (kernel time
  // plus the graph cost model's terms; one request for those not yet known);
  // 0 for signatures that do not canonicalize or that the profiler cannot
  // measure. For searches that cost operators one by one (e-graphs): the sum
  // over a graph's operators is GraphCost.
  absl::StatusOr<std::vector<double>> SignatureCosts(const std::vector<profiler::Signature>& signatures);

  int64_t requests() const { return requests_; }
  int64_t signatures() const { return static_cast<int64_t>(costs_.size()); }
  int64_t unmeasured() const { return unmeasured_; }
  // Composite signatures without a kernel of their own, priced as their
  // decomposition's operators (by key).
  const std::set<std::string>& priced_as_decomposition() const { return priced_as_decomposition_; }
  // The signatures the profiler could not measure (they cost 0), by key,
  // with its reason.
  const std::map<std::string, std::string>& unmeasured_signatures() const { return unmeasured_signatures_; }
  bool any_estimate() const { return any_estimate_; }
  // The device the costs came from ("" before the first measurement).
  const std::string& device() const { return device_; }
  // The backend that answered (unspecified before the first measurement):
  // the requested one, or what the profiler resolved "auto" to.
  profiler::Backend answered_backend() const { return answered_backend_; }
  // The threads the answering backend measured at (0 for cuda and analytic,
  // or before the first measurement), and why the profiler chose it when no
  // backend was asked for ("" otherwise).
  int answered_threads() const { return answered_threads_; }
  const std::string& backend_choice() const { return backend_choice_; }
  // The backend's graph cost model (known after the first request).
  const profiler::GraphCostModel& graph_cost_model() const { return model_; }
  // "kernels + 0.0200 ms/node + ... (calibration ...)", for reports.
  std::string Describe() const;

 private:
  profiler::ProfilerClient* client_;
  profiler::Backend backend_;
  struct Known {
    double kernel_ms = 0;
    int64_t output_bytes = 0;
    OpKind kind = OpKind::kInput;
    // A composite the backend has no kernel for: what its decomposition's
    // operators cost in the graph (PriceAsDecomposition).
    std::optional<double> decomposition_ms;
  };
  // Prices the composite `signature` (its key `key`, left unmeasured) as the
  // sum of its decomposition's operators, so a fused kernel without one is
  // never free to the searches.
  absl::Status PriceAsDecomposition(const std::string& key, const profiler::Signature& signature);
  std::map<std::string, Known> costs_;  // canonical signature key -> its measurement
  profiler::GraphCostModel model_;
  bool model_known_ = false;
  int64_t requests_ = 0;
  int64_t unmeasured_ = 0;
  std::map<std::string, std::string> unmeasured_signatures_;
  std::set<std::string> priced_as_decomposition_;
  bool any_estimate_ = false;
  std::string device_;
  profiler::Backend answered_backend_ = profiler::BACKEND_UNSPECIFIED;
  int threads_;
  int answered_threads_ = 0;
  std::string backend_choice_;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_COST_MODEL_H_
