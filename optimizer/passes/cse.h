// Common-subexpression elimination: operators of the same kind and
// parameters on the same inputs compute the same values, so all but the
// first are dropped and their readers read the first. Run before the
// backtracking search (the e-graph's hash-consing does the same for eqsat),
// so duplicated subgraphs (e.g. an exporter's repeated Shape/Transpose
// chains, or two branches both normalising one input) are computed once.
// Opaque operators are kept as they are (a random or stateful operator is
// not a pure function of its inputs); inputs and weights are never merged.
#ifndef TASO_OPTIMIZER_PASSES_CSE_H_
#define TASO_OPTIMIZER_PASSES_CSE_H_

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "optimizer/passes/passes.h"

namespace taso::optimizer {

// `changed` counts the operators removed.
absl::StatusOr<PassResult> EliminateCommonSubexpressions(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_CSE_H_
