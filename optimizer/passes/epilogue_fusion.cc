#include "optimizer/passes/epilogue_fusion.h"

#include "optimizer/rewrite/apply.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/passes/structural_rules.h"

namespace taso::optimizer {

absl::StatusOr<PassResult> FuseEpilogues(const Graph& graph, CostModel& cost) {
  PassResult result{graph, 0};
  auto current = cost.GraphCost(graph);
  if (!current.ok()) return current.status();
  // A bias fusion makes the activation after it fusable, so go round until
  // nothing applies; each round makes the graph smaller, so this ends.
  for (bool progress = true; progress;) {
    progress = false;
    const GraphIndex index(result.graph);  // valid until the graph changes, which ends the round
    for (const RewriteRule& rule : FusionRewrites(result.graph)) {
      for (const Match& match : FindMatches(rule, index)) {
        auto next = ApplyRewrite(result.graph, rule, match);
        if (!next.ok()) continue;  // e.g. it would form a cycle
        auto next_cost = cost.GraphCost(*next);
        if (!next_cost.ok()) return next_cost.status();
        if (*next_cost > *current) continue;
        result.graph = std::move(*next);
        current = next_cost;
        ++result.changed;
        progress = true;
        break;  // the index and the rules are stale now
      }
      if (progress) break;
    }
  }
  return result;
}

}  // namespace taso::optimizer
