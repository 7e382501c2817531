#include "optimizer/rewrite/reachable_rules.h"

namespace taso::optimizer {

static_assert(static_cast<int>(kLastOpKind) < 32, "KindSet holds one bit per operator kind");

KindSet OperatorKinds(const Graph& graph) {
  KindSet kinds = 0;
  for (const Node& n : graph.nodes()) {
    if (IsInputOrWeight(n.kind)) continue;
    kinds |= KindSet{1} << static_cast<int>(n.kind);
  }
  return kinds;
}

std::vector<int> ReachableRewrites(const Graph& graph, const std::vector<const RewriteRule*>& rewrites,
                                   KindSet* reachable) {
  std::vector<KindSet> needs(rewrites.size()), builds(rewrites.size());
  for (size_t i = 0; i < rewrites.size(); ++i) {
    needs[i] = OperatorKinds(rewrites[i]->lhs());
    builds[i] = OperatorKinds(rewrites[i]->rhs());
  }
  KindSet kinds = OperatorKinds(graph);
  // At most one pass per kind added, and there are fewer than 32 kinds.
  for (KindSet before = ~kinds; before != kinds;) {
    before = kinds;
    for (size_t i = 0; i < rewrites.size(); ++i) {
      if ((needs[i] & ~kinds) == 0) kinds |= builds[i];
    }
  }
  std::vector<int> kept;
  for (size_t i = 0; i < rewrites.size(); ++i) {
    if ((needs[i] & ~kinds) == 0) kept.push_back(static_cast<int>(i));
  }
  if (reachable != nullptr) *reachable = kinds;
  return kept;
}

}  // namespace taso::optimizer
