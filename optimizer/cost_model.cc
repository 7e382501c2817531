#include "optimizer/cost_model.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "optimizer/match.h"
#include "profiler/signature.h"

namespace taso::optimizer {

CostModel::CostModel(profiler::ProfilerClient* client, profiler::Backend backend)
    : client_(client), backend_(backend) {}

absl::StatusOr<double> CostModel::GraphCost(const Graph& graph) {
  const GraphIndex index(graph);
  std::vector<std::string> keys(graph.num_nodes());
  profiler::MeasureRequest request;
  request.set_backend(backend_);
  std::vector<std::string> asked;
  for (const Node& node : graph.nodes()) {
    if (node.kind == OpKind::kInput || node.kind == OpKind::kWeight || index.is_constant(node.id)) continue;
    profiler::Signature sig{node.kind, node.params, {}};
    for (const TensorRef& in : node.inputs) sig.inputs.push_back(graph.type(in));
    auto canonical = profiler::Canonicalize(sig);
    // An operator the profiler cannot even describe (opaque with unknown
    // dims) is unchanged by every rewrite: it adds the same to every graph.
    keys[node.id] = canonical.ok() ? canonical->key : absl::StrCat("#unmeasurable:", node.id);
    if (!canonical.ok() || costs_.count(keys[node.id])) continue;
    costs_[keys[node.id]] = 0;  // placeholder so a signature is asked once
    asked.push_back(keys[node.id]);
    *request.add_signatures() = profiler::SignatureToProto(sig);
  }
  if (request.signatures_size() > 0) {
    ++requests_;
    auto response = client_->MeasureBatch(request);
    if (!response.ok()) {
      for (const std::string& k : asked) costs_.erase(k);
      return response.status();
    }
    for (int i = 0; i < response->results_size() && i < static_cast<int>(asked.size()); ++i) {
      const auto& r = response->results(i);
      if (r.has_cost()) {
        costs_[asked[i]] = r.cost().median_ms();
        any_estimate_ = any_estimate_ || r.cost().is_estimate();
      } else {
        ++unmeasured_;
      }
    }
  }
  double total = 0;
  for (const std::string& k : keys) {
    if (k.empty()) continue;
    auto it = costs_.find(k);
    if (it != costs_.end()) total += it->second;
  }
  return total;
}

}  // namespace taso::optimizer
