#include "costs/graph_cost.h"

#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "costs/signature.h"

namespace taso::profiler {

absl::StatusOr<GraphCostReport> MeasureGraph(const Graph& graph, ProfilerClient& client, Backend backend,
                                             bool bypass_cache, int threads) {
  return SumOperatorCosts(
      graph, [&client](const MeasureRequest& r) { return client.MeasureBatch(r); }, client.Describe(), backend,
      bypass_cache, threads);
}

absl::StatusOr<GraphCostReport> SumOperatorCosts(const Graph& graph, const MeasureBatchFn& measure,
                                                 const std::string& who, Backend backend, bool bypass_cache,
                                                 int threads) {
  GraphCostReport report;
  std::map<std::string, int> index;  // key -> position in report.distinct
  MeasureRequest request;
  request.set_backend(backend);
  request.set_bypass_cache(bypass_cache);
  request.set_threads(threads);
  for (const Node& node : graph.nodes()) {
    if (node.kind == OpKind::kInput || node.kind == OpKind::kWeight) continue;
    ++report.operators;
    const Signature sig = NodeSignature(graph, node);
    auto canonical = Canonicalize(sig);
    const std::string key = canonical.ok() ? canonical->key : absl::StrCat(DescribeNode(node), " (invalid)");
    auto [it, inserted] = index.emplace(key, static_cast<int>(report.distinct.size()));
    if (inserted) {
      report.distinct.push_back(OperatorCost{key, 0, {}, {}, TensorBytes(node.output_types), node.kind});
      *request.add_signatures() = SignatureToProto(sig);
    }
    ++report.distinct[it->second].count;
  }
  const auto start = std::chrono::steady_clock::now();
  auto response = measure(request);
  report.request_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!response.ok()) return response.status();
  if (response->results_size() != static_cast<int>(report.distinct.size())) {
    return absl::InternalError(absl::StrCat(who, " answered ", response->results_size(),
                                            " results for ", report.distinct.size(), " signatures"));
  }
  report.model = response->graph_cost_model();
  for (size_t i = 0; i < report.distinct.size(); ++i) {
    OperatorCost& op = report.distinct[i];
    const MeasureResult& r = response->results(i);
    if (r.has_cost()) {
      op.cost = r.cost();
      report.total_ms += op.count * op.cost.median_ms();
      report.modelled_ms += op.count * OperatorGraphMs(report.model, op.kind, op.cost.median_ms(), op.output_bytes);
      if (op.cost.median_ms() > 0) {
        report.kernel_operators += op.count;
        report.output_mb += op.count * static_cast<double>(op.output_bytes) / 1e6;
      }
      report.any_estimate = report.any_estimate || op.cost.is_estimate();
      if (response->backend() != BACKEND_UNSPECIFIED && op.cost.backend() != response->backend()) {
        report.delegated += op.count;
        report.delegated_ms += op.count * op.cost.median_ms();
      }
    } else {
      op.error = r.error().message();
      report.unmeasured += op.count;
    }
  }
  const int64_t weight_bytes = WeightWorkingSetBytes(graph);
  report.weight_mb = static_cast<double>(weight_bytes) / 1e6;
  report.weight_stream_ms = WeightStreamMs(report.model, weight_bytes);
  report.modelled_ms += report.weight_stream_ms;
  return report;
}

}  // namespace taso::profiler
