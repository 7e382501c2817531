#include "optimizer/backtrack/backtrack.h"

#include <algorithm>
#include <queue>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/canonical.h"
#include "optimizer/rewrite/apply.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rule_index.h"

namespace taso::optimizer {
namespace {

struct Candidate {
  double cost;
  int serial;  // ties: older first, so the search is deterministic
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const std::map<std::string, int>> path;
};

struct Worse {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.cost != b.cost ? a.cost > b.cost : a.serial > b.serial;
  }
};

}  // namespace

absl::StatusOr<SearchResult> BacktrackSearch(const Graph& graph, const std::vector<RewriteRule>& rules,
                                             CostModel& cost, const BacktrackOptions& options) {
  const absl::Time start = absl::Now();
  // The search explores by operator sums and answers by whole-graph costs:
  // a sequence of merges passes through graphs that read the original
  // weights beside merged copies (each step of an RNN cell merged in turn),
  // which the weight term charges although the graph at the end of the
  // sequence reads no more weights than the input. Ordered by the whole
  // cost, those steps fell behind thousands of cost-neutral graphs.
  auto initial = cost.GraphCostInParts(graph);
  if (!initial.ok()) return initial.status();
  auto hash = StructuralHash(graph);
  if (!hash.ok()) return hash.status();

  SearchResult result{graph, {}};
  result.report.initial_cost_ms = result.report.best_cost_ms = initial->total_ms();
  double best_explored_ms = initial->operators_ms;  // what alpha is measured against
  std::set<std::string> seen = {hash->ToHex()};
  std::priority_queue<Candidate, std::vector<Candidate>, Worse> queue;
  int serial = 0;
  const RuleIndex rule_index(rules);
  queue.push({initial->operators_ms, serial++, std::make_shared<Graph>(graph), std::make_shared<std::map<std::string, int>>()});
  SearchStop stop = SearchStop::kQueueExhausted;
  std::string stop_detail = "queue exhausted: no rewrite gives a graph within alpha of the best";
  while (!queue.empty()) {
    if (result.report.expanded >= options.budget) {
      stop = SearchStop::kBudget;
      stop_detail = absl::StrCat("budget of ", options.budget, " expanded graphs");
      break;
    }
    if (absl::Now() - start > options.time_limit || (options.cancelled && options.cancelled())) {
      stop = SearchStop::kTimeLimit;
      stop_detail = absl::StrCat("time limit of ", absl::FormatDuration(options.time_limit));
      break;
    }
    Candidate current = queue.top();
    queue.pop();
    if (current.cost > options.alpha * best_explored_ms) continue;
    ++result.report.expanded;
    const GraphIndex index(*current.graph);
    for (int r : rule_index.Candidates(index)) {
      const RewriteRule& rule = rules[r];
      for (const Match& m : FindMatches(rule, index, options.max_matches_per_rule)) {
        auto next = ApplyRewrite(*current.graph, rule, m);
        if (!next.ok()) {
          ++result.report.rejected;
          continue;
        }
        auto h = StructuralHash(*next);
        if (!h.ok() || !seen.insert(h->ToHex()).second) continue;
        ++result.report.generated;
        auto c = cost.GraphCostInParts(*next);
        if (!c.ok()) return c.status();
        auto path = std::make_shared<std::map<std::string, int>>(*current.path);
        ++(*path)[rule.name];
        if (c->total_ms() < result.report.best_cost_ms) {
          result.report.best_cost_ms = c->total_ms();
          result.best = *next;
          result.report.rules_applied = *path;
        }
        best_explored_ms = std::min(best_explored_ms, c->operators_ms);
        if (options.progress != nullptr) {
          SearchProgress now;
          now.initial_cost_ms = result.report.initial_cost_ms;
          now.best_cost_ms = result.report.best_cost_ms;
          now.graphs_expanded = result.report.expanded;
          now.graphs_generated = result.report.generated;
          options.progress->SearchUpdate(now);
        }
        if (c->operators_ms < options.alpha * best_explored_ms && static_cast<int>(queue.size()) < options.max_queue) {
          queue.push({c->operators_ms, serial++, std::make_shared<Graph>(std::move(*next)), std::move(path)});
        }
      }
    }
  }
  result.report.stop_reason = stop;
  result.report.stop_detail = std::move(stop_detail);
  result.report.elapsed = absl::Now() - start;
  return result;
}

}  // namespace taso::optimizer
