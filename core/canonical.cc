#include "core/canonical.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso {
namespace {

struct Analysis {
  std::vector<Hash128> hash;
  std::vector<int> depth;
};

absl::StatusOr<Analysis> Analyze(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  Analysis a;
  a.hash.resize(graph.num_nodes());
  a.depth.assign(graph.num_nodes(), 0);
  for (int id : *order) {
    const Node& node = graph.node(id);
    Hasher h(static_cast<uint64_t>(node.kind));
    h.AddString(node.name);
    HashParams(node.kind, node.params, h);
    if (node.inputs.empty()) {
      for (const TensorType& t : node.output_types) t.HashInto(h);
    }
    h.Add(node.inputs.size());
    for (const TensorRef& r : node.inputs) {
      h.Add(a.hash[r.node]);
      h.Add(static_cast<uint64_t>(r.index));
      a.depth[id] = std::max(a.depth[id], a.depth[r.node] + 1);
    }
    a.hash[id] = h.Finish();
  }
  return a;
}

}  // namespace

absl::StatusOr<std::vector<Hash128>> NodeStructuralHashes(const Graph& graph) {
  auto a = Analyze(graph);
  if (!a.ok()) return a.status();
  return a->hash;
}

absl::StatusOr<Graph> Canonicalize(const Graph& graph) {
  auto a = Analyze(graph);
  if (!a.ok()) return a.status();
  std::vector<int> order(graph.num_nodes());
  std::iota(order.begin(), order.end(), 0);
  // Identical hashes are identical computations, so the id tie-break only
  // decides between interchangeable duplicates.
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    if (a->depth[x] != a->depth[y]) return a->depth[x] < a->depth[y];
    if (a->hash[x] != a->hash[y]) return a->hash[x] < a->hash[y];
    return x < y;
  });
  std::vector<int> new_id(graph.num_nodes());
  for (size_t i = 0; i < order.size(); ++i) new_id[order[i]] = static_cast<int>(i);
  std::vector<Node> nodes;
  nodes.reserve(order.size());
  for (int old : order) {
    Node n = graph.node(old);
    n.id = new_id[old];
    for (TensorRef& r : n.inputs) r.node = new_id[r.node];
    nodes.push_back(std::move(n));
  }
  std::vector<GraphOutput> outputs = graph.outputs();
  for (GraphOutput& o : outputs) o.tensor.node = new_id[o.tensor.node];
  return Graph::Create(std::move(nodes), std::move(outputs));
}

absl::StatusOr<std::string> CanonicalText(const Graph& graph) {
  auto canon = Canonicalize(graph);
  if (!canon.ok()) return canon.status();
  std::string text;
  for (const Node& n : canon->nodes()) {
    absl::StrAppend(&text, "%", n.id, " = ");
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) {
      absl::StrAppend(&text, OpKindName(n.kind), " \"", n.name, "\" ", n.output_types[0].ToString(), "\n");
      continue;
    }
    absl::StrAppend(&text, OpLabel(n.kind, n.params));
    std::vector<std::string> args;
    for (const TensorRef& r : n.inputs) args.push_back(absl::StrCat("%", r.node, ":", r.index));
    std::vector<std::string> outs;
    for (const TensorType& t : n.output_types) outs.push_back(t.ToString());
    absl::StrAppend(&text, "(", absl::StrJoin(args, ", "), ") -> ", absl::StrJoin(outs, ", "), "\n");
  }
  for (const GraphOutput& o : canon->outputs()) {
    absl::StrAppend(&text, "output \"", o.name, "\" = %", o.tensor.node, ":", o.tensor.index, "\n");
  }
  return text;
}

absl::StatusOr<Hash128> StructuralHash(const Graph& graph) {
  auto text = CanonicalText(graph);
  if (!text.ok()) return text.status();
  Hasher h;
  h.AddString(*text);
  return h.Finish();
}

}  // namespace taso
