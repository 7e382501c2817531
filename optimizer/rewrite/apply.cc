#include "optimizer/rewrite/apply.h"

#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace taso::optimizer {
namespace {

struct RefLess {
  bool operator()(const TensorRef& a, const TensorRef& b) const {
    return a.node != b.node ? a.node < b.node : a.index < b.index;
  }
};

// Keeps `keep` nodes (plus every graph input) and renumbers them 0..n-1 in
// their relative order; node ids must be valid positions in `nodes`.
absl::StatusOr<Graph> Compact(const std::vector<Node>& nodes, const std::vector<bool>& keep,
                              const std::vector<GraphOutput>& outputs, std::vector<int>* new_id_out = nullptr) {
  std::vector<int> new_id(nodes.size(), -1);
  std::vector<Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!keep[i] && nodes[i].kind != OpKind::kInput) continue;
    new_id[i] = static_cast<int>(kept.size());
    kept.push_back(nodes[i]);
    kept.back().id = new_id[i];
  }
  for (Node& n : kept) {
    for (TensorRef& in : n.inputs) {
      if (new_id[in.node] < 0) return absl::InternalError("a kept node reads a removed one");
      in.node = new_id[in.node];
    }
  }
  std::vector<GraphOutput> outs = outputs;
  for (GraphOutput& o : outs) o.tensor.node = new_id[o.tensor.node];
  if (new_id_out != nullptr) *new_id_out = new_id;
  return Graph::Create(std::move(kept), std::move(outs));
}

std::vector<bool> Live(const std::vector<Node>& nodes, const std::vector<GraphOutput>& outputs) {
  std::vector<bool> live(nodes.size(), false);
  std::vector<int> stack;
  for (const GraphOutput& o : outputs) stack.push_back(o.tensor.node);
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id < 0 || id >= static_cast<int>(nodes.size()) || live[id]) continue;
    live[id] = true;
    for (const TensorRef& in : nodes[id].inputs) stack.push_back(in.node);
  }
  return live;
}

}  // namespace

absl::StatusOr<Graph> RemoveDeadNodes(const Graph& graph) {
  return Compact(graph.nodes(), Live(graph.nodes(), graph.outputs()), graph.outputs());
}

absl::StatusOr<Graph> ApplyRewrite(const Graph& graph, const RewriteRule& rule, const Match& match) {
  std::vector<Node> nodes = graph.nodes();
  std::set<int> removed;
  for (int h : match.nodes) {
    if (h >= 0) removed.insert(h);
  }
  // The right side's nodes, appended with fresh ids.
  std::map<int, TensorRef> rhs_value;  // rhs source node -> host tensor
  std::vector<int> rhs_new_id(rule.rhs().num_nodes(), -1);
  auto order = rule.rhs().TopologicalOrder();
  if (!order.ok()) return order.status();
  for (int id : *order) {
    const Node& r = rule.rhs().node(id);
    if (IsInputOrWeight(r.kind)) {
      auto it = match.binding.find(r.name);
      if (it == match.binding.end()) {
        return absl::FailedPreconditionError(absl::StrCat(rule.name, ": variable ", r.name, " is not bound"));
      }
      rhs_value[id] = it->second;
      continue;
    }
    Node n;
    n.id = static_cast<int>(nodes.size());
    n.kind = r.kind;
    n.params = r.params;
    for (const TensorRef& in : r.inputs) {
      n.inputs.push_back(IsInputOrWeight(rule.rhs().node(in.node).kind) ? rhs_value[in.node]
                                                           : TensorRef{rhs_new_id[in.node], in.index});
    }
    rhs_new_id[id] = n.id;
    nodes.push_back(std::move(n));
  }
  // Readers of the matched outputs now read the replacement's outputs.
  std::map<TensorRef, TensorRef, RefLess> redirect;
  for (size_t i = 0; i < match.outputs.size(); ++i) {
    const TensorRef r = rule.rhs().outputs()[i].tensor;
    redirect[match.outputs[i]] =
        IsInputOrWeight(rule.rhs().node(r.node).kind) ? rhs_value[r.node] : TensorRef{rhs_new_id[r.node], r.index};
  }
  auto follow = [&](TensorRef t) {
    auto it = redirect.find(t);
    return it == redirect.end() ? t : it->second;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (removed.count(static_cast<int>(i))) continue;
    for (TensorRef& in : nodes[i].inputs) in = follow(in);
  }
  std::vector<GraphOutput> outputs = graph.outputs();
  for (GraphOutput& o : outputs) o.tensor = follow(o.tensor);
  // Matched nodes stay in the vector (ids are positions) but are dead now.
  std::vector<bool> live = Live(nodes, outputs);
  for (int h : removed) {
    if (live[h]) {
      // Still read: a bound tensor depends on a replaced value (a cycle).
      return absl::FailedPreconditionError(absl::StrCat(rule.name, ": the replacement would create a cycle"));
    }
  }
  std::vector<int> new_id;
  auto result = Compact(nodes, live, outputs, &new_id);
  if (!result.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(rule.name, " does not fit here: ", result.status().message()));
  }
  // The replacement's operators must keep the facts the rule's proof
  // assumed on the tensors they meet here, fact variables as the match bound them.
  FactBinding facts = match.facts;
  for (int id = 0; id < rule.rhs().num_nodes(); ++id) {
    if (rhs_new_id[id] < 0 || new_id[rhs_new_id[id]] < 0) continue;  // a variable, or read by nothing
    const Node& built = result->node(new_id[rhs_new_id[id]]);
    std::vector<TensorType> types;
    for (const TensorRef& in : built.inputs) types.push_back(result->type(in));
    if (!KeepsProof(rule.rhs_conditions(), id, built.kind, built.params, types,
                    static_cast<int>(built.output_types.size()), &facts)) {
      return absl::FailedPreconditionError(
          absl::StrCat(rule.name, ": the replacement's ", DescribeNode(built), " would leave the rule's proof"));
    }
  }
  // The replacement must produce what the pattern's readers expect (layouts
  // may differ: values do not).
  for (const auto& [old_ref, new_ref] : redirect) {
    if (new_id[new_ref.node] < 0) continue;  // read by nothing any more
    const TensorType& before = graph.type(old_ref);
    const TensorType& after = result->type(TensorRef{new_id[new_ref.node], new_ref.index});
    if (before.dims != after.dims || before.dtype != after.dtype) {
      return absl::FailedPreconditionError(absl::StrCat(rule.name, " would turn ", before.ToString(), " into ",
                                                        after.ToString()));
    }
  }
  return result;
}

}  // namespace taso::optimizer
