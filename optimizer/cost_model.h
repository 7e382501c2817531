// TASO's cost model for the search: a graph costs the sum of its operators'
// measured times. Each distinct signature is asked of the profiler once per
// optimization (one MeasureBatch for every new signature of a graph) and
// remembered, so exploring thousands of candidate graphs costs a handful of
// requests. Operators computed from weights only cost 0: they are folded
// before the model runs.
#ifndef TASO_OPTIMIZER_COST_MODEL_H_
#define TASO_OPTIMIZER_COST_MODEL_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "profiler/client.h"
#include "profiler/signature.h"

namespace taso::optimizer {

class CostModel {
 public:
  // `client` must outlive the model.
  CostModel(profiler::ProfilerClient* client, profiler::Backend backend = profiler::BACKEND_UNSPECIFIED);

  // Milliseconds. Fails only when the profiler cannot be reached or refuses
  // the whole request; operators it cannot measure (opaque ones) cost 0 and
  // are counted in unmeasured().
  absl::StatusOr<double> GraphCost(const Graph& graph);
  // Milliseconds for each signature (one request for those not yet known);
  // 0 for signatures that do not canonicalize or that the profiler cannot
  // measure. For searches that cost operators one by one (e-graphs).
  absl::StatusOr<std::vector<double>> SignatureCosts(const std::vector<profiler::Signature>& signatures);

  int64_t requests() const { return requests_; }
  int64_t signatures() const { return static_cast<int64_t>(costs_.size()); }
  int64_t unmeasured() const { return unmeasured_; }
  bool any_estimate() const { return any_estimate_; }
  // The device the costs came from ("" before the first measurement).
  const std::string& device() const { return device_; }

 private:
  profiler::ProfilerClient* client_;
  profiler::Backend backend_;
  std::map<std::string, double> costs_;  // canonical signature key -> ms
  int64_t requests_ = 0;
  int64_t unmeasured_ = 0;
  bool any_estimate_ = false;
  std::string device_;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_COST_MODEL_H_
