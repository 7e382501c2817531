// Applying a rewrite at a match: the matched operators are replaced by the
// rule's right side over the bound tensors, their readers are redirected, and
// what became dead is removed (graph inputs always stay).
#ifndef TASO_OPTIMIZER_REWRITE_APPLY_H_
#define TASO_OPTIMIZER_REWRITE_APPLY_H_

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// FailedPrecondition when the replacement does not fit here: its shapes do not
// infer on the bound tensors, an output's type would change, or it would make
// the graph cyclic (a bound tensor computed from a replaced one).
absl::StatusOr<Graph> ApplyRewrite(const Graph& graph, const RewriteRule& rule, const Match& match);

// The graph without nodes no output depends on (inputs are kept), renumbered
// in topological order.
absl::StatusOr<Graph> RemoveDeadNodes(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_APPLY_H_
