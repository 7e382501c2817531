// Which rewrites a search on a given graph could ever apply. A pattern can
// only match operators of the kinds it names, and the only operators a search
// ever sees are the graph's own and those some applied rewrite builds. So the
// kinds reachable from a graph are its own kinds closed under "a rewrite whose
// pattern uses only reachable kinds adds the kinds its replacement builds",
// and a rewrite whose pattern names a kind outside that closure can never
// match. Dropping those changes no search result; with 185,000 size-4
// rewrites it saves the copy a search takes and the matching it would try.
#ifndef TASO_OPTIMIZER_REWRITE_REACHABLE_RULES_H_
#define TASO_OPTIMIZER_REWRITE_REACHABLE_RULES_H_

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// Operator kinds as bits (1 << kind); inputs and weights are not operators.
using KindSet = uint32_t;
KindSet OperatorKinds(const Graph& graph);

// Indices (ascending) into `rewrites` of those whose pattern uses only kinds
// reachable from `graph`; `reachable`, when given, receives the closure.
std::vector<int> ReachableRewrites(const Graph& graph, const std::vector<const RewriteRule*>& rewrites,
                                   KindSet* reachable = nullptr);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_REACHABLE_RULES_H_
