// Canonical form of a graph: a node order and a text serialization that do
// not depend on how the graph's nodes were numbered, and a structural hash of
// that form. Inputs and weights are identified by name.
#ifndef TASO_CORE_CANONICAL_H_
#define TASO_CORE_CANONICAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/hash.h"

namespace taso {

// Per node: a hash of the node's operator, parameters and (recursively) the
// nodes it reads from. Equal hashes mean equal computations.
absl::StatusOr<std::vector<Hash128>> NodeStructuralHashes(const Graph& graph);

// The same graph with nodes renumbered canonically: by depth from the
// sources, then by structural hash.
absl::StatusOr<Graph> Canonicalize(const Graph& graph);

// One line per node of the canonical graph, then one per output, e.g.
//   %0 = input "x" f32[2,4]
//   %2 = matmul[act=none](%0:0, %1:0) -> f32[2,4]
//   output "y" = %2:0
absl::StatusOr<std::string> CanonicalText(const Graph& graph);

// Hash of CanonicalText: invariant under renumbering, sensitive to structure.
absl::StatusOr<Hash128> StructuralHash(const Graph& graph);

}  // namespace taso

#endif  // TASO_CORE_CANONICAL_H_
