#include "optimizer/passes/cost_model.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/decomposition.h"
#include "costs/signature.h"

namespace taso::optimizer {
bool RuntimeFoldsOpaque(const OpaqueInfo& op, const std::vector<TensorType>& inputs,
                        const std::vector<bool>& inputs_at_load) {
  // As ONNX Runtime's optimizer/constant_folding.cc and optimizer/utils.cc
  // decide: Shape of a concrete shape; otherwise deterministic default-domain
  // operators without subgraphs, on constant inputs only.
  if (!op.domain.empty() && op.domain != "ai.onnx") return false;
  if (op.op_type == "Shape" && inputs.size() == 1) {
    for (int64_t d : inputs[0].dims) {
      if (d < 0) return false;
    }
    return true;
  }
  static const std::set<std::string> kNever = {
      // Not deterministic (ORT also lists Dropout)...
      "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Dropout", "Bernoulli",
      // ... or with a subgraph.
      "If", "Loop", "Scan", "SequenceMap"};
  if (kNever.count(op.op_type)) return false;
  for (bool at_load : inputs_at_load) {
    if (!at_load) return false;
  }
  return true;
}

std::vector<bool> FoldedAtLoad(const Graph& graph) {
  std::vector<bool> at_load = ComputedAtLoad(graph);
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return at_load;
  // Again in order: an IR operator reading a folded opaque value is folded too.
  for (int id : *order) {
    const Node& node = graph.node(id);
    if (IsInputOrWeight(node.kind)) continue;
    if (node.kind == OpKind::kOpaque) {
      std::vector<TensorType> inputs;
      std::vector<bool> inputs_at_load;
      for (const TensorRef& in : node.inputs) {
        inputs.push_back(graph.type(in));
        inputs_at_load.push_back(at_load[in.node]);
      }
      at_load[id] = RuntimeFoldsOpaque(node.params.opaque, inputs, inputs_at_load);
      continue;
    }
    bool all = true;
    for (const TensorRef& in : node.inputs) all = all && at_load[in.node];
    at_load[id] = all;
  }
  return at_load;
}

CostModel::CostModel(profiler::ProfilerClient* client, profiler::Backend backend, int threads)
    : client_(client), backend_(backend), threads_(threads) {}

absl::StatusOr<double> CostModel::GraphCost(const Graph& graph) {
  auto parts = GraphCostInParts(graph);
  if (!parts.ok()) return parts.status();
  return parts->total_ms();
}

absl::StatusOr<GraphCostParts> CostModel::GraphCostInParts(const Graph& graph) {
  // What a runtime computes at load costs nothing per run.
  const std::vector<bool> at_load = FoldedAtLoad(graph);
  std::vector<profiler::Signature> signatures;
  for (const Node& node : graph.nodes()) {
    if (IsInputOrWeight(node.kind) || at_load[node.id]) continue;
    signatures.push_back(profiler::NodeSignature(graph, node));
  }
  auto costs = SignatureCosts(signatures);
  if (!costs.ok()) return costs.status();
  GraphCostParts parts;
  for (double c : *costs) parts.operators_ms += c;
  // The first request has brought the graph cost model. Counting the
  // weights walks the graph once more: only where the model charges them.
  if (profiler::HasWeightTerm(model_)) {
    parts.weights_ms = profiler::WeightStreamMs(model_, profiler::WeightWorkingSetBytes(graph));
  }
  return parts;
}

absl::StatusOr<std::vector<double>> CostModel::SignatureCosts(const std::vector<profiler::Signature>& signatures) {
  std::vector<std::string> keys(signatures.size());
  profiler::MeasureRequest request;
  request.set_backend(backend_);
  request.set_threads(threads_);
  std::vector<std::string> asked;
  std::vector<const profiler::Signature*> asked_signatures;
  for (size_t i = 0; i < signatures.size(); ++i) {
    auto canonical = profiler::Canonicalize(signatures[i]);
    // An operator the profiler cannot even describe (opaque with unknown
    // dims) is unchanged by every rewrite: it adds the same to every graph.
    if (!canonical.ok()) continue;
    keys[i] = canonical->key;
    if (costs_.count(keys[i])) continue;
    // A placeholder so a signature is asked once.
    costs_[keys[i]] = Known{0, profiler::TensorBytes(canonical->outputs), signatures[i].kind};
    asked.push_back(keys[i]);
    asked_signatures.push_back(&signatures[i]);
    *request.add_signatures() = profiler::SignatureToProto(signatures[i]);
  }
  // The first request is made even without signatures: its answer carries
  // the graph cost model every later cost depends on.
  if (request.signatures_size() > 0 || !model_known_) {
    ++requests_;
    auto response = client_->MeasureBatch(request);
    if (!response.ok()) {
      for (const std::string& k : asked) costs_.erase(k);
      return response.status();
    }
    if (!model_known_) {
      model_ = response->graph_cost_model();
      model_known_ = true;
      answered_threads_ = response->threads();
      backend_choice_ = response->backend_choice();
    }
    // The backend that answered, not one a cost was delegated to (the cpu
    // backend's opaque operators are measured in ONNX Runtime).
    if (device_.empty() && response->backend() != profiler::BACKEND_UNSPECIFIED) {
      device_ = response->device();
      answered_backend_ = response->backend();
    }
    for (int i = 0; i < response->results_size() && i < static_cast<int>(asked.size()); ++i) {
      const auto& r = response->results(i);
      if (r.has_cost()) {
        costs_[asked[i]].kernel_ms = r.cost().median_ms();
        any_estimate_ = any_estimate_ || r.cost().is_estimate();
        if (device_.empty()) {
          device_ = r.cost().device();
          answered_backend_ = r.cost().backend();
        }
      } else if (IsComposite(asked_signatures[i]->kind)) {
        if (absl::Status s = PriceAsDecomposition(asked[i], *asked_signatures[i]); !s.ok()) return s;
      } else {
        ++unmeasured_;
        unmeasured_signatures_[asked[i]] = r.has_error() ? r.error().message() : "no cost and no reason";
      }
    }
  }
  std::vector<double> out(signatures.size(), 0);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty()) continue;
    const Known& known = costs_[keys[i]];
    out[i] = known.decomposition_ms ? *known.decomposition_ms
                                    : profiler::OperatorGraphMs(model_, known.kind, known.kernel_ms, known.output_bytes);
  }
  return out;
}

absl::Status CostModel::PriceAsDecomposition(const std::string& key, const profiler::Signature& signature) {
  auto g = DecompositionOf(signature.kind, signature.params, signature.inputs);
  if (!g.ok()) return g.status();
  std::vector<profiler::Signature> parts;
  for (const Node& n : g->nodes()) {
    if (n.kind != OpKind::kInput) parts.push_back(profiler::NodeSignature(*g, n));
  }
  auto costs = SignatureCosts(parts);  // primitives only: no deeper recursion
  if (!costs.ok()) return costs.status();
  double sum = 0;
  for (double c : *costs) sum += c;
  costs_[key].decomposition_ms = sum;
  priced_as_decomposition_.insert(key);
  return absl::OkStatus();
}

std::string CostModel::Describe() const { return profiler::DescribeGraphCostModel(model_); }

}  // namespace taso::optimizer
