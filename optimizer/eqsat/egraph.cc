#include "optimizer/eqsat/egraph.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/op.h"
#include "core/op_registry.h"

namespace taso::optimizer {
namespace {

std::string OpKey(const EOp& op) {
  switch (op.role) {
    case EOp::Role::kVariable: return absl::StrCat("var|", op.name);
    case EOp::Role::kOpaque: return absl::StrCat("opaque|", op.source_node);
    case EOp::Role::kGetItem: return absl::StrCat("item|", op.item);
    case EOp::Role::kOperator: break;
  }
  return absl::StrCat("op|", static_cast<int>(op.kind), "|", CanonicalParams(op.kind, op.params));
}

}  // namespace

int EGraph::InternOp(const EOp& op) {
  auto [it, inserted] = op_index_.try_emplace(OpKey(op), static_cast<int>(ops_.size()));
  if (inserted) ops_.push_back(op);
  return it->second;
}

std::optional<int> EGraph::FindOp(const EOp& op) const {
  auto it = op_index_.find(OpKey(op));
  if (it == op_index_.end()) return std::nullopt;
  return it->second;
}

bool EGraph::YieldsTuple(int op) const {
  const EOp& o = ops_[op];
  return o.role == EOp::Role::kOpaque || (o.role == EOp::Role::kOperator && o.kind == OpKind::kSplit);
}

EClassId EGraph::Find(EClassId id) const {
  EClassId root = id;
  while (parent_[root] != root) root = parent_[root];
  while (parent_[id] != root) {  // path compression
    const EClassId next = parent_[id];
    parent_[id] = root;
    id = next;
  }
  return root;
}

ENode EGraph::Canonical(const ENode& node) const {
  ENode c = node;
  for (EClassId& child : c.children) child = Find(child);
  return c;
}

ENode EGraph::MemoKey(ENode canonical) const {
  const EOp& op = ops_[canonical.op];
  if (op.role == EOp::Role::kOperator && OperandsCommute(op.kind) && canonical.children.size() == 2 &&
      canonical.children[1] < canonical.children[0]) {
    std::swap(canonical.children[0], canonical.children[1]);
  }
  return canonical;
}

absl::StatusOr<std::vector<TensorType>> EGraph::InferTypes(const ENode& node) const {
  const EOp& op = ops_[node.op];
  switch (op.role) {
    case EOp::Role::kVariable: return std::vector<TensorType>{op.type};
    case EOp::Role::kGetItem: {
      if (node.children.size() != 1) return absl::InvalidArgumentError("get-item needs one child");
      const EClass& tuple = eclass(node.children[0]);
      if (!tuple.tuple || op.item < 0 || op.item >= static_cast<int>(tuple.types.size())) {
        return absl::InvalidArgumentError(absl::StrCat("get-item ", op.item, " of a class that has no such output"));
      }
      return std::vector<TensorType>{tuple.types[op.item]};
    }
    case EOp::Role::kOperator:
    case EOp::Role::kOpaque: break;
  }
  std::vector<TensorType> inputs;
  for (EClassId child : node.children) {
    const EClass& c = eclass(child);
    if (c.tuple) return absl::InvalidArgumentError("an operator reads a tuple class");
    inputs.push_back(c.types[0]);
  }
  const OpInfo& info = GetOpInfo(op.kind);
  if (static_cast<int>(inputs.size()) < info.min_inputs ||
      (info.max_inputs >= 0 && static_cast<int>(inputs.size()) > info.max_inputs)) {
    return absl::InvalidArgumentError(absl::StrCat(OpKindName(op.kind), " with ", inputs.size(), " inputs"));
  }
  return InferOutputTypes(op.kind, op.params, inputs);
}

bool EGraph::ComputesConstant(const ENode& node) const {
  const EOp& op = ops_[node.op];
  if (op.role == EOp::Role::kVariable) return op.kind == OpKind::kWeight;
  if (op.role == EOp::Role::kOpaque) return false;
  return IsFoldable(node);
}

bool EGraph::IsFoldable(const ENode& node) const {
  const EOp& op = ops_[node.op];
  if (op.role != EOp::Role::kOperator && op.role != EOp::Role::kGetItem) return false;
  for (EClassId child : node.children) {
    if (!eclass(child).constant) return false;
  }
  return true;  // constants without inputs too
}

std::optional<EClassId> EGraph::Lookup(ENode node) const {
  auto it = memo_.find(MemoKey(Canonical(node)));
  if (it == memo_.end()) return std::nullopt;
  return Find(it->second);
}

absl::StatusOr<EClassId> EGraph::Add(ENode node) {
  node = Canonical(node);
  ENode key = MemoKey(node);
  if (auto it = memo_.find(key); it != memo_.end()) return Find(it->second);
  auto types = InferTypes(node);
  if (!types.ok()) return types.status();
  const EClassId cls = static_cast<EClassId>(classes_.size());
  const ENodeId id = static_cast<ENodeId>(nodes_.size());
  int height = 0;
  for (EClassId child : node.children) {
    height = std::max(height, height_[child] + 1);
    parents_[child].push_back(id);
  }
  height_.push_back(height);
  parents_.emplace_back();
  EClass c;
  c.types = *std::move(types);
  c.tuple = YieldsTuple(node.op);
  c.constant = ComputesConstant(node);
  c.nodes = {id};
  classes_.push_back(std::move(c));
  parent_.push_back(cls);
  nodes_.push_back(node);
  node_class_.push_back(cls);
  alive_.push_back(true);
  memo_.emplace(std::move(key), cls);
  ++live_nodes_;
  ++live_classes_;
  return cls;
}

bool EGraph::Union(EClassId a, EClassId b) {
  a = Find(a);
  b = Find(b);
  if (a == b) return false;
  if (b < a) std::swap(a, b);  // the older class is the root and keeps its types
  parent_[b] = a;
  // The lower side's readers may now sit below the merged class: raise them.
  const int merged_height = std::max(height_[a], height_[b]);
  std::vector<EClassId> raised;
  for (EClassId side : {a, b}) {
    if (height_[side] < merged_height) {
      height_[side] = merged_height;
      raised.push_back(side);
    }
  }
  PropagateHeight(std::move(raised));
  std::vector<ENodeId>& readers = parents_[a];
  readers.insert(readers.end(), parents_[b].begin(), parents_[b].end());
  parents_[b] = {};
  EClass& root = classes_[a];
  EClass& merged = classes_[b];
  root.nodes.insert(root.nodes.end(), merged.nodes.begin(), merged.nodes.end());
  root.constant = root.constant || merged.constant;
  merged = EClass{};
  --live_classes_;
  return true;
}

void EGraph::PropagateHeight(std::vector<EClassId> raised) {
  while (!raised.empty()) {
    const EClassId c = raised.back();
    raised.pop_back();
    const int h = height_[c];
    for (ENodeId p : parents_[c]) {
      const EClassId reader = Find(node_class_[p]);
      if (height_[reader] < h) {
        height_[reader] = h;
        raised.push_back(reader);
      }
    }
  }
}

void EGraph::Rebuild() {
  // Re-canonicalize every e-node until no two equal e-nodes sit in different
  // classes. Each pass is linear; passes repeat only while unions cascade up
  // through parents, which in practice is a few times.
  bool merged = true;
  while (merged) {
    merged = false;
    memo_.clear();
    for (ENodeId id = 0; id < static_cast<ENodeId>(nodes_.size()); ++id) {
      if (!alive_[id]) continue;
      nodes_[id] = Canonical(nodes_[id]);
      const EClassId cls = Find(node_class_[id]);
      auto [it, inserted] = memo_.try_emplace(MemoKey(nodes_[id]), cls);
      if (inserted) continue;
      // A duplicate: the same computation over the same classes.
      alive_[id] = false;
      --live_nodes_;
      if (Union(it->second, cls)) merged = true;
      it->second = Find(cls);
    }
  }
  for (auto& [node, cls] : memo_) cls = Find(cls);
  for (EClassId c = 0; c < static_cast<EClassId>(classes_.size()); ++c) {
    classes_[c].nodes.clear();
    parents_[c].clear();
  }
  for (ENodeId id = 0; id < static_cast<ENodeId>(nodes_.size()); ++id) {
    if (!alive_[id]) continue;
    node_class_[id] = Find(node_class_[id]);
    classes_[node_class_[id]].nodes.push_back(id);
    for (EClassId child : nodes_[id].children) {
      if (parents_[child].empty() || parents_[child].back() != id) parents_[child].push_back(id);
    }
  }
  // Constant analysis to a fixpoint: it only ever turns classes constant.
  bool grew = true;
  while (grew) {
    grew = false;
    for (ENodeId id = 0; id < static_cast<ENodeId>(nodes_.size()); ++id) {
      if (!alive_[id]) continue;
      EClass& c = classes_[node_class_[id]];
      if (!c.constant && ComputesConstant(nodes_[id])) {
        c.constant = true;
        grew = true;
      }
    }
  }
}

std::vector<EClassId> EGraph::ClassIds() const {
  std::vector<EClassId> ids;
  for (EClassId c = 0; c < static_cast<EClassId>(classes_.size()); ++c) {
    if (parent_[c] == c) ids.push_back(c);
  }
  return ids;
}

absl::StatusOr<GraphEGraph> EGraphFromGraph(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  GraphEGraph out;
  EGraph& eg = out.egraph;
  // Class of each node: the tensor class of a single-output node, the tuple
  // class of a multi-output one (its outputs are get-item classes).
  std::vector<EClassId> node_class(graph.num_nodes(), -1);
  std::vector<bool> is_tuple(graph.num_nodes(), false);
  auto tensor_class = [&](TensorRef t) -> absl::StatusOr<EClassId> {
    if (!is_tuple[t.node]) return node_class[t.node];
    EOp item;
    item.role = EOp::Role::kGetItem;
    item.item = t.index;
    return eg.Add(ENode{eg.InternOp(item), {node_class[t.node]}});
  };
  for (int id : *order) {
    const Node& n = graph.node(id);
    ENode enode;
    for (const TensorRef& in : n.inputs) {
      auto c = tensor_class(in);
      if (!c.ok()) return c.status();
      enode.children.push_back(*c);
    }
    enode.op = eg.InternOp(EOpOfNode(n));
    is_tuple[id] = eg.YieldsTuple(enode.op);
    auto cls = eg.Add(std::move(enode));
    if (!cls.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(n), ": ", cls.status().message()));
    }
    node_class[id] = *cls;
  }
  for (const GraphOutput& o : graph.outputs()) {
    auto c = tensor_class(o.tensor);
    if (!c.ok()) return c.status();
    out.outputs.push_back(*c);
  }
  eg.Rebuild();
  return out;
}

}  // namespace taso::optimizer

namespace taso::optimizer {

EOp EOpOfNode(const Node& n) {
  EOp op;
  op.kind = n.kind;
  if (IsInputOrWeight(n.kind)) {
    op.role = EOp::Role::kVariable;
    op.name = n.name;
    op.type = n.output_types[0];
    op.data = n.data;
  } else {
    op.role = n.kind == OpKind::kOpaque ? EOp::Role::kOpaque : EOp::Role::kOperator;
    op.params = n.params;
    op.source_node = n.id;
  }
  return op;
}

std::optional<std::vector<EClassId>> LookupGraph(const EGraph& egraph, const Graph& graph) {
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return std::nullopt;
  std::vector<EClassId> node_class(graph.num_nodes(), -1);
  auto tensor_class = [&](TensorRef t) -> std::optional<EClassId> {
    const EClassId c = node_class[t.node];
    if (!egraph.eclass(c).tuple) return c;
    EOp item;
    item.role = EOp::Role::kGetItem;
    item.item = t.index;
    auto op = egraph.FindOp(item);
    if (!op) return std::nullopt;
    return egraph.Lookup(ENode{*op, {c}});
  };
  for (int id : *order) {
    const Node& n = graph.node(id);
    auto op = egraph.FindOp(EOpOfNode(n));
    if (!op) return std::nullopt;
    ENode enode{*op, {}};
    for (const TensorRef& in : n.inputs) {
      auto c = tensor_class(in);
      if (!c) return std::nullopt;
      enode.children.push_back(*c);
    }
    auto cls = egraph.Lookup(std::move(enode));
    if (!cls) return std::nullopt;
    node_class[id] = *cls;
  }
  std::vector<EClassId> outputs;
  for (const GraphOutput& o : graph.outputs()) {
    auto c = tensor_class(o.tensor);
    if (!c) return std::nullopt;
    outputs.push_back(egraph.Find(*c));
  }
  return outputs;
}

}  // namespace taso::optimizer
