#include "core/graph.h"

#include <algorithm>
#include <queue>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"

namespace taso {
namespace {

absl::Status CheckRefs(const std::vector<Node>& nodes, const Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorRef& r = node.inputs[i];
    if (r.node < 0 || r.node >= static_cast<int>(nodes.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeNode(node), ": input ", i, " refers to missing node ", r.node));
    }
    // Output counts of later nodes may not be known yet; checked again after inference.
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> TopoSort(const std::vector<Node>& nodes) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> users(n);
  for (const Node& node : nodes) {
    for (const TensorRef& r : node.inputs) {
      if (r.node < 0 || r.node >= n) {
        return absl::InvalidArgumentError(
            absl::StrCat(DescribeNode(node), ": input refers to missing node ", r.node));
      }
      users[r.node].push_back(node.id);
      ++indegree[node.id];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int id = ready.top();
    ready.pop();
    order.push_back(id);
    for (int u : users[id]) {
      if (--indegree[u] == 0) ready.push(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (indegree[i] > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph has a cycle through ", DescribeNode(nodes[i])));
      }
    }
  }
  return order;
}

absl::StatusOr<std::vector<TensorType>> InferNode(const std::vector<Node>& nodes, const Node& node) {
  if (IsInputOrWeight(node.kind)) {
    if (!node.inputs.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": takes no inputs"));
    }
    if (node.output_types.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": needs exactly one type"));
    }
    const TensorType& t = node.output_types[0];
    if (t.strides.size() != t.dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": strides do not match rank"));
    }
    for (int64_t d : t.dims) {
      if (d < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(DescribeNode(node), ": type ", t.ToString(), " has a dimension < 1"));
      }
    }
    if (node.data) {
      const int64_t elem = t.dtype == DType::kInt64 ? 8 : t.dtype == DType::kFloat16 ? 2 :
                           t.dtype == DType::kBool ? 1 : 4;
      if (static_cast<int64_t>(node.data->size()) != t.num_elements() * elem) {
        return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": has ", node.data->size(),
                                                       " data bytes, type ", t.ToString(), " needs ",
                                                       t.num_elements() * elem));
      }
    }
    return node.output_types;
  }
  std::vector<TensorType> in;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorRef& r = node.inputs[i];
    const Node& src = nodes[r.node];
    if (r.index < 0 || r.index >= static_cast<int>(src.output_types.size())) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": input ", i, " refers to output ",
                                                     r.index, " of ", DescribeNode(src), ", which has ",
                                                     src.output_types.size()));
    }
    in.push_back(src.output_types[r.index]);
  }
  auto types = InferOutputTypes(node.kind, node.params, in);
  if (!types.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": ", types.status().message()));
  }
  return types;
}

absl::Status CheckOutputs(const std::vector<Node>& nodes, const std::vector<GraphOutput>& outputs) {
  for (const GraphOutput& o : outputs) {
    const TensorRef& r = o.tensor;
    if (r.node < 0 || r.node >= static_cast<int>(nodes.size()) || r.index < 0 ||
        r.index >= static_cast<int>(nodes[r.node].output_types.size())) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", o.name, "' refers to missing tensor ",
                                                     r.node, ":", r.index));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string DescribeNode(const Node& node) {
  if (!node.name.empty()) return absl::StrCat("node ", node.id, " (", OpKindName(node.kind), " ", node.name, ")");
  return absl::StrCat("node ", node.id, " (", OpKindName(node.kind), ")");
}

absl::StatusOr<Graph> Graph::Create(std::vector<Node> nodes, std::vector<GraphOutput> outputs) {
  std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) { return a.id < b.id; });
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id != static_cast<int>(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ids must be 0..", nodes.size() - 1, " without gaps or repeats; found id ",
                       nodes[i].id, " at position ", i));
    }
    if (absl::Status s = CheckRefs(nodes, nodes[i]); !s.ok()) return s;
  }
  auto order = TopoSort(nodes);
  if (!order.ok()) return order.status();
  for (int id : *order) {
    auto types = InferNode(nodes, nodes[id]);
    if (!types.ok()) return types.status();
    nodes[id].output_types = *std::move(types);
  }
  if (absl::Status s = CheckOutputs(nodes, outputs); !s.ok()) return s;
  Graph g;
  g.nodes_ = std::move(nodes);
  g.outputs_ = std::move(outputs);
  return g;
}

TensorRef Graph::AddInput(const std::string& name, TensorType type) {
  Node n;
  n.id = num_nodes();
  n.kind = OpKind::kInput;
  n.name = name;
  n.output_types = {std::move(type)};
  nodes_.push_back(std::move(n));
  return {nodes_.back().id, 0};
}

TensorRef Graph::AddWeight(const std::string& name, TensorType type,
                           std::shared_ptr<const std::string> data) {
  TensorRef r = AddInput(name, std::move(type));
  nodes_.back().kind = OpKind::kWeight;
  nodes_.back().data = std::move(data);
  return r;
}

absl::StatusOr<std::vector<TensorRef>> Graph::AddOp(OpKind kind, const OpParams& params,
                                                    const std::vector<TensorRef>& inputs) {
  Node n;
  n.id = num_nodes();
  n.kind = kind;
  n.params = params;
  n.inputs = inputs;
  if (IsInputOrWeight(kind)) {
    return absl::InvalidArgumentError("use AddInput or AddWeight for graph inputs and weights");
  }
  if (absl::Status s = CheckRefs(nodes_, n); !s.ok()) return s;
  auto types = InferNode(nodes_, n);
  if (!types.ok()) return types.status();
  n.output_types = *std::move(types);
  std::vector<TensorRef> outs;
  for (size_t i = 0; i < n.output_types.size(); ++i) outs.push_back({n.id, static_cast<int>(i)});
  nodes_.push_back(std::move(n));
  return outs;
}

absl::StatusOr<TensorRef> Graph::AddOp1(OpKind kind, const OpParams& params,
                                        const std::vector<TensorRef>& inputs) {
  auto outs = AddOp(kind, params, inputs);
  if (!outs.ok()) return outs.status();
  if (outs->size() != 1) {
    nodes_.pop_back();
    return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), " has ", outs->size(),
                                                   " outputs; use AddOp"));
  }
  return (*outs)[0];
}

void Graph::AddOutput(const std::string& name, TensorRef tensor) { outputs_.push_back({name, tensor}); }

int Graph::num_ops() const {
  int n = 0;
  for (const Node& node : nodes_) n += IsInputOrWeight(node.kind) ? 0 : 1;
  return n;
}

absl::StatusOr<std::vector<int>> Graph::TopologicalOrder() const { return TopoSort(nodes_); }

absl::Status Graph::Validate() const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].id != static_cast<int>(i)) {
      return absl::InvalidArgumentError(absl::StrCat("node at position ", i, " has id ", nodes_[i].id));
    }
  }
  auto order = TopoSort(nodes_);
  if (!order.ok()) return order.status();
  for (int id : *order) {
    auto types = InferNode(nodes_, nodes_[id]);
    if (!types.ok()) return types.status();
    if (*types != nodes_[id].output_types) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeNode(nodes_[id]), ": stored output types differ from inferred ones"));
    }
  }
  return CheckOutputs(nodes_, outputs_);
}

std::vector<bool> ComputedAtLoad(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (order.ok()) return ComputedAtLoad(graph, *order);
  std::vector<int> ids(graph.num_nodes());
  for (int i = 0; i < graph.num_nodes(); ++i) ids[i] = i;
  return ComputedAtLoad(graph, ids);
}

std::vector<bool> ComputedAtLoad(const Graph& graph, const std::vector<int>& order) {
  std::vector<bool> at_load(graph.num_nodes(), false);
  for (int id : order) {
    const Node& node = graph.node(id);
    if (node.kind == OpKind::kWeight) {
      at_load[id] = true;
    } else if (node.kind != OpKind::kInput && node.kind != OpKind::kOpaque) {
      bool all = true;
      for (const TensorRef& in : node.inputs) all = all && at_load[in.node];
      at_load[id] = all;
    }
  }
  return at_load;
}

}  // namespace taso
