// TASO's cost-based backtracking search: a priority queue of candidate graphs
// ordered by cost; each popped graph is expanded by every rewrite at every
// match; a new graph is kept when it costs less than alpha times the best so
// far (alpha > 1 lets the search pass through slightly worse graphs to reach
// better ones). Graphs are de-duplicated by structural hash. The queue and
// alpha use the operators' costs; the best graph is the one whose whole cost
// (with the weight term, cost_model.h) is least.
#ifndef TASO_OPTIMIZER_BACKTRACK_BACKTRACK_H_
#define TASO_OPTIMIZER_BACKTRACK_BACKTRACK_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/graph.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/search/progress.h"
#include "optimizer/search/search_control.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/search/search_report.h"

namespace taso::optimizer {

// SearchControl's `progress` is told the best cost after each expanded graph.
struct BacktrackOptions : SearchControl {
  double alpha = 1.05;               // TASO's default
  int budget = 1000;                 // graphs expanded at most
  int max_matches_per_rule = 200;    // per graph expanded
  int max_queue = 20000;             // candidate graphs held at most
};


struct SearchResult {
  Graph best;
  SearchReport report;
};

absl::StatusOr<SearchResult> BacktrackSearch(const Graph& graph, const std::vector<RewriteRule>& rules,
                                             CostModel& cost, const BacktrackOptions& options = {});

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_BACKTRACK_BACKTRACK_H_
