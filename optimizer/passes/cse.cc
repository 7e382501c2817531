#include "optimizer/passes/cse.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "optimizer/rewrite/apply.h"

namespace taso::optimizer {

absl::StatusOr<PassResult> EliminateCommonSubexpressions(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<Node> nodes = graph.nodes();
  std::vector<GraphOutput> outputs = graph.outputs();
  // What each node's inputs read once duplicates are dropped.
  std::vector<int> representative(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) representative[i] = static_cast<int>(i);
  using Key = std::tuple<OpKind, std::string, std::vector<std::pair<int, int>>>;
  std::map<Key, int> seen;
  int merged = 0;
  for (int id : *order) {
    Node& n = nodes[id];
    for (TensorRef& in : n.inputs) in.node = representative[in.node];
    if (IsInputOrWeight(n.kind) || n.kind == OpKind::kOpaque) continue;
    // Output types too: equal for equal operators on equal inputs, but cheap
    // insurance against a parameter the canonical form leaves out.
    std::string params = CanonicalParams(n.kind, n.params);
    for (const TensorType& t : n.output_types) params += t.ToString();
    Key key{n.kind, std::move(params), {}};
    for (const TensorRef& in : n.inputs) std::get<2>(key).push_back({in.node, in.index});
    auto [it, inserted] = seen.emplace(std::move(key), id);
    if (inserted) continue;
    // Same kind, parameters and inputs: the same values.
    representative[id] = it->second;
    ++merged;
  }
  if (merged == 0) return PassResult{graph, 0};
  for (GraphOutput& o : outputs) o.tensor.node = representative[o.tensor.node];
  auto rebuilt = Graph::Create(std::move(nodes), std::move(outputs));
  if (!rebuilt.ok()) return rebuilt.status();
  auto live = RemoveDeadNodes(*rebuilt);
  if (!live.ok()) return live.status();
  return PassResult{std::move(*live), merged};
}

}  // namespace taso::optimizer
