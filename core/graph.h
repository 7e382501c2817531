// A tensor computation graph: a DAG of nodes, each an operator applied to
// outputs of earlier nodes. Graph inputs and weights are source nodes with a
// name and a type; graph outputs are named references to node outputs.
#ifndef TASO_CORE_GRAPH_H_
#define TASO_CORE_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/op.h"
#include "core/tensor_type.h"

namespace taso {

struct TensorRef {
  int node = -1;
  int index = 0;
  friend bool operator==(const TensorRef& a, const TensorRef& b) {
    return a.node == b.node && a.index == b.index;
  }
  friend bool operator!=(const TensorRef& a, const TensorRef& b) { return !(a == b); }
};

struct Node {
  int id = -1;
  OpKind kind = OpKind::kInput;
  OpParams params;
  std::vector<TensorRef> inputs;
  std::string name;                       // inputs and weights: their name
  std::vector<TensorType> output_types;   // inferred (given for inputs and weights)
  // Weights only, optional: raw little-endian values of output_types[0].dtype.
  std::shared_ptr<const std::string> data;
};

// A sum or a product of two operands, which may be read in either order
// (OperandsCommute).
inline bool OperandsCommute(const Node& n) { return OperandsCommute(n.kind) && n.inputs.size() == 2; }

struct GraphOutput {
  std::string name;
  TensorRef tensor;
};

class Graph {
 public:
  Graph() = default;

  // Builds a graph from nodes given in any order (node ids are positions in
  // `nodes` after sorting by id; ids must be 0..n-1). Checks references,
  // acyclicity and shapes, and fills output types. Errors name the node.
  static absl::StatusOr<Graph> Create(std::vector<Node> nodes, std::vector<GraphOutput> outputs);

  TensorRef AddInput(const std::string& name, TensorType type);
  TensorRef AddWeight(const std::string& name, TensorType type,
                      std::shared_ptr<const std::string> data = nullptr);
  // Appends an operator after inferring its output types.
  absl::StatusOr<std::vector<TensorRef>> AddOp(OpKind kind, const OpParams& params,
                                               const std::vector<TensorRef>& inputs);
  // As AddOp, for operators with exactly one output.
  absl::StatusOr<TensorRef> AddOp1(OpKind kind, const OpParams& params,
                                   const std::vector<TensorRef>& inputs);
  void AddOutput(const std::string& name, TensorRef tensor);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return nodes_[id]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  const TensorType& type(TensorRef t) const { return nodes_[t.node].output_types[t.index]; }
  // Number of operator nodes (everything but inputs and weights).
  int num_ops() const;

  // Re-checks the whole graph: references in range, acyclic, every node's
  // stored types equal to what inference gives, outputs valid.
  absl::Status Validate() const;
  // Node ids in an order where every node follows its inputs; ties are broken
  // by id, so the order is deterministic.
  absl::StatusOr<std::vector<int>> TopologicalOrder() const;

 private:
  std::vector<Node> nodes_;
  std::vector<GraphOutput> outputs_;
};

// Graph inputs and weights: source nodes that carry their own name and type
// (a rule side's variables).
inline bool IsInputOrWeight(OpKind kind) { return kind == OpKind::kInput || kind == OpKind::kWeight; }

// "node 3 (conv2d)" or "node 0 (input x)": how errors refer to a node.
std::string DescribeNode(const Node& node);

// For each node, whether a runtime computes its values once, when it loads
// the model: weights, and every operator but an opaque one whose inputs are
// all such values (constants without inputs too). Graph inputs and opaque
// operators never are. Nodes are visited in topological order (in id order
// when the graph has a cycle, which Validate reports); callers that have an
// order already pass it.
std::vector<bool> ComputedAtLoad(const Graph& graph);
std::vector<bool> ComputedAtLoad(const Graph& graph, const std::vector<int>& order);

}  // namespace taso

#endif  // TASO_CORE_GRAPH_H_
