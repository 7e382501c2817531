// What changed between two versions of a graph (a model before and after
// the optimizer), found from structure alone, never from node names (an
// exporter renames operators freely; inputs and weights keep their names).
//
// Two passes match nodes. Bottom up: a node matches one that computes the
// same thing, that is the same operator (kind, parameters, output types; for
// an input or weight its name and values) on matched inputs, so everything
// a rewrite did not reach matches. Top down from the graph outputs (by name):
// the same operator at the same input position of matched nodes matches, so
// what follows a rewritten region matches too, as an operator that now reads
// other tensors. What is left over was removed (before) or added (after).
#ifndef TASO_PICTURES_GRAPH_DIFF_H_
#define TASO_PICTURES_GRAPH_DIFF_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"

namespace taso::pictures {

enum class NodeChange {
  kKept,     // matched, reading the partners of what it read
  kRewired,  // matched, but some input is not its partner's input: an edge changed
  kRemoved,  // a node of `before` without a partner
  kAdded,    // a node of `after` without a partner
};

struct GraphDiff {
  std::vector<int> before_partner;  // per node of `before`: its match in `after`, or -1
  std::vector<int> after_partner;   // per node of `after`: its match in `before`, or -1
  std::vector<NodeChange> before_change, after_change;
  int removed = 0, added = 0, rewired = 0;  // rewired counts matched pairs

  bool unchanged() const { return removed == 0 && added == 0 && rewired == 0; }
};

// InvalidArgument if either graph is cyclic.
absl::StatusOr<GraphDiff> DiffGraphs(const Graph& before, const Graph& after);

}  // namespace taso::pictures

#endif  // TASO_PICTURES_GRAPH_DIFF_H_
