// An e-graph over tensor programs: e-nodes are hash-consed, e-classes are the
// sets of e-nodes proved to compute the same value (a union-find over class
// ids), and Rebuild() restores congruence (equal operators over equal
// children are one class) after unions.
//
// Multi-output operators (split, opaque operators) produce a tuple: their
// e-class is a tuple class, and a get-item e-node (output index, tuple class)
// selects one tensor of it. Operator children are always tensor classes.
// Graph inputs and weights are leaf e-nodes keyed by name; opaque operators
// keep their inputs as children but are keyed by the node they came from, so
// two of them are never merged and no rule rewrites them.
//
// Each class carries an analysis: its types (one TensorType, or one per tuple
// output; the oldest member's when two classes merge, since rewrites only
// promise equal dims and dtype) and whether its value is constant (some
// member is computed from weights and constants only, so it can be folded
// before the model runs).
#ifndef TASO_OPTIMIZER_EQSAT_EGRAPH_H_
#define TASO_OPTIMIZER_EQSAT_EGRAPH_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/graph.h"

namespace taso::optimizer {

using EClassId = int;
using ENodeId = int;

// What an e-node computes, apart from its children.
struct EOp {
  enum class Role { kVariable, kOperator, kOpaque, kGetItem };
  Role role = Role::kOperator;
  OpKind kind = OpKind::kRelu;  // variables: kInput or kWeight; opaque: kOpaque
  OpParams params;              // operators and opaque nodes
  int item = -1;                // get-item: the output it selects
  // Variables: the graph input or weight it stands for.
  std::string name;
  TensorType type;
  std::shared_ptr<const std::string> data;
  int source_node = -1;  // opaque: the node of the input graph (its identity)
};

struct ENode {
  int op = 0;  // index into EGraph::op()
  std::vector<EClassId> children;
  friend bool operator==(const ENode& a, const ENode& b) { return a.op == b.op && a.children == b.children; }
  template <typename H>
  friend H AbslHashValue(H h, const ENode& n) {
    return H::combine(std::move(h), n.op, n.children);
  }
};

struct EClass {
  std::vector<TensorType> types;  // one for a tensor class, one per output for a tuple class
  bool tuple = false;
  bool constant = false;
  std::vector<ENodeId> nodes;  // live e-nodes of the class (canonical after Rebuild)
};

class EGraph {
 public:
  // The index of an operation; equal operations (same role and kind, equal
  // canonical parameters, same variable name or item) share one index.
  int InternOp(const EOp& op);
  // The index of an equal operation already interned, if any.
  std::optional<int> FindOp(const EOp& op) const;
  const EOp& op(int index) const { return ops_[index]; }
  // Whether e-nodes of this operation yield a tuple class.
  bool YieldsTuple(int op) const;

  // Adds the e-node (children are canonicalized) unless an equal one exists;
  // returns its class. InvalidArgument when its types do not infer.
  absl::StatusOr<EClassId> Add(ENode node);
  // The class of an equal e-node, if one exists.
  std::optional<EClassId> Lookup(ENode node) const;
  // Output types of the e-node given its children's class types.
  absl::StatusOr<std::vector<TensorType>> InferTypes(const ENode& node) const;

  EClassId Find(EClassId id) const;
  // Merges two classes; false when they already were one. The merged class
  // keeps the older (smaller) id and its types.
  bool Union(EClassId a, EClassId b);
  // Restores hash-consing and congruence (merging classes whose e-nodes
  // became equal) and recomputes the constant analysis. Call after unions,
  // before matching.
  void Rebuild();

  const EClass& eclass(EClassId id) const { return classes_[Find(id)]; }
  const ENode& node(ENodeId id) const { return nodes_[id]; }
  EClassId ClassOf(ENodeId id) const { return Find(node_class_[id]); }
  // The e-node with its children canonicalized.
  ENode Canonical(const ENode& node) const;
  // An operator whose children are all constant classes: it is folded before
  // the model runs and costs nothing.
  bool IsFoldable(const ENode& node) const;

  // Canonical ids of all classes, ascending.
  std::vector<EClassId> ClassIds() const;
  int num_enodes() const { return live_nodes_; }
  int num_eclasses() const { return live_classes_; }
  // Total e-node slots (ids are below this; some may be dead duplicates).
  int enode_capacity() const { return static_cast<int>(nodes_.size()); }
  bool alive(ENodeId id) const { return alive_[id]; }
  // A level for pruning reachability searches: a class only reaches classes
  // whose height is at most its own (kept true through adds and unions).
  int height(EClassId id) const { return height_[Find(id)]; }

 private:
  bool ComputesConstant(const ENode& node) const;
  // What a canonical e-node is hash-consed under: a sum's or a product's
  // operands in class order, so `a + b` and `b + a` are one e-node (IEEE
  // addition and multiplication commute) while each keeps the order it was
  // written in, which extraction writes back.
  ENode MemoKey(ENode canonical) const;
  // Raises the heights of the classes reading `raised` (and so on upward)
  // until every class is at least as high as its children.
  void PropagateHeight(std::vector<EClassId> raised);

  std::vector<EOp> ops_;
  absl::flat_hash_map<std::string, int> op_index_;
  std::vector<ENode> nodes_;
  std::vector<EClassId> node_class_;
  std::vector<bool> alive_;
  std::vector<EClass> classes_;
  std::vector<int> height_;                   // per class id
  std::vector<std::vector<ENodeId>> parents_;  // per class id: e-nodes reading it
  mutable std::vector<EClassId> parent_;
  absl::flat_hash_map<ENode, EClassId> memo_;  // keyed by MemoKey
  int live_nodes_ = 0;
  int live_classes_ = 0;
};

// The e-graph of a graph: one class per distinct value, and the class of each
// graph output, in order.
struct GraphEGraph {
  EGraph egraph;
  std::vector<EClassId> outputs;
};
absl::StatusOr<GraphEGraph> EGraphFromGraph(const Graph& graph);

// The operation of graph node `n`'s e-node (its children aside).
EOp EOpOfNode(const Node& n);

// The classes of `graph`'s outputs when every node of it is already in the
// e-graph (variables by name), else nullopt: whether the e-graph holds the
// graph, without adding to it.
std::optional<std::vector<EClassId>> LookupGraph(const EGraph& egraph, const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_EGRAPH_H_
