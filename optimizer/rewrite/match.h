// Finding a rewrite's pattern in a graph: an injective map from the pattern's
// operator nodes to the graph's, with equal operators and parameters and
// consistent inputs, and a binding of each pattern variable to a tensor.
#ifndef TASO_OPTIMIZER_REWRITE_MATCH_H_
#define TASO_OPTIMIZER_REWRITE_MATCH_H_

#include <map>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/side_conditions.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// Facts about a graph that matching asks for again and again.
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);
  const Graph& graph() const { return graph_; }
  // Nodes reading any output of `node`, ascending.
  const std::vector<int>& consumers(int node) const { return consumers_[node]; }
  // Operator nodes of a kind, ascending.
  const std::vector<int>& nodes_of(OpKind kind) const;
  // True when the node's value is known before the model runs: a weight, a
  // constant, or computed from those only.
  bool is_constant(int node) const { return constant_[node]; }
  // True when some graph output reads `t`.
  bool is_graph_output(TensorRef t) const;
  // The proof signatures of an operator node on its inputs' types
  // (core/proof_signature.h); empty when the axioms do not model it.
  const std::vector<ProofSignature>& signatures(int node) const { return signatures_[node]; }

 private:
  const Graph& graph_;
  std::vector<std::vector<int>> consumers_;
  std::map<OpKind, std::vector<int>> by_kind_;
  std::vector<bool> constant_;
  std::vector<std::vector<ProofSignature>> signatures_;
  std::vector<int> empty_;
};

struct Match {
  std::vector<int> nodes;                    // host node of each pattern node (-1 for variables)
  std::map<std::string, TensorRef> binding;  // variable name -> host tensor
  std::vector<TensorRef> outputs;            // host tensors the pattern's outputs matched
  FactBinding facts;                         // the proof's fact variables as the host binds them
};

// The pattern operator the search places first: the producer of the first
// output when that is an operator, else the first operator; -1 when the
// pattern has no operator (it matches nothing).
int PatternAnchor(const Graph& pattern);

// Every match of `rule.lhs()` in the indexed graph, at most `limit` of them.
// A match is only reported when replacing it is possible: values computed
// inside the pattern and not among its outputs are used by nothing else,
// weight variables bind constant tensors, and every matched operator keeps
// the signature the rule's proof assumed (so a law proved for dense
// convolutions never matches a depthwise one).
std::vector<Match> FindMatches(const RewriteRule& rule, const GraphIndex& index, int limit = 1000);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_MATCH_H_
