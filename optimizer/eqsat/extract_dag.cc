// DAG greedy extraction and tree cost (extract.h).
//
// Per class the best program found so far is kept as a sorted set of
// e-nodes; an e-node's program is itself plus the union of its operands'
// programs, costed with each e-node once. A worklist relaxes e-nodes whose
// operands improved until nothing improves (or a work budget is spent:
// costs only fall, by a relative step, so it ends, but a bound keeps the
// worst case in check).
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/eqsat/extract_internal.h"

namespace taso::optimizer {

using extract_internal::PickCost;
using extract_internal::RestrictAcyclic;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Relaxations per e-node on average before the pass gives up (it then keeps
// greedy's choice); the suite's e-graphs settle in under 3.
constexpr int64_t kRelaxationsPerNode = 64;

bool Improves(double candidate, double best) {
  if (best == kInfinity) return candidate < kInfinity;
  return candidate < best - 1e-12 * std::max(1.0, std::abs(best));
}

// The set-based pass: per class, the e-node of the cheapest program found.
std::vector<int> DagPick(const ExtractionProblem& p, absl::Time deadline) {
  const int classes = static_cast<int>(p.class_id.size());
  const int nodes = static_cast<int>(p.node_id.size());
  std::vector<std::vector<int>> readers(classes);
  for (int n = 0; n < nodes; ++n) {
    for (int d : p.node_children[n]) readers[d].push_back(n);
  }
  std::vector<std::vector<int>> program(classes);  // sorted e-nodes
  std::vector<double> best(classes, kInfinity);
  std::vector<int> pick(classes, -1);
  std::deque<int> work;
  std::vector<char> queued(nodes, 0);
  for (int n = 0; n < nodes; ++n) {
    if (p.node_children[n].empty()) {
      work.push_back(n);
      queued[n] = 1;
    }
  }
  int64_t budget = kRelaxationsPerNode * std::max(nodes, 1);
  std::vector<int> merged;
  while (!work.empty() && budget-- > 0) {
    if ((budget & 1023) == 0 && absl::Now() > deadline) break;
    const int n = work.front();
    work.pop_front();
    queued[n] = 0;
    const int c = p.node_class[n];
    bool ready = true;
    for (int d : p.node_children[n]) ready = ready && pick[d] >= 0;
    if (!ready) continue;
    merged.assign(1, n);
    for (int d : p.node_children[n]) merged.insert(merged.end(), program[d].begin(), program[d].end());
    std::sort(merged.begin(), merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
    double cost = 0;
    bool cyclic = false;
    for (int m : merged) {
      cost += p.node_cost[m];
      cyclic = cyclic || (m != n && p.node_class[m] == c);
    }
    if (cyclic || !Improves(cost, best[c])) continue;
    best[c] = cost;
    pick[c] = n;
    program[c] = merged;
    for (int r : readers[c]) {
      if (!queued[r]) {
        queued[r] = 1;
        work.push_back(r);
      }
    }
  }
  return pick;
}

}  // namespace

absl::StatusOr<ProblemChoice> SolveGreedyDag(const ExtractionProblem& problem, absl::Time deadline) {
  auto greedy = SolveGreedy(problem);
  std::vector<int> pick = DagPick(problem, deadline);
  if (!RestrictAcyclic(problem, pick)) {
    if (!greedy.ok()) return greedy.status();
    greedy->kept_earlier = true;
    return greedy;
  }
  ProblemChoice out;
  out.cost_ms = PickCost(problem, pick);
  out.pick = std::move(pick);
  if (greedy.ok() && greedy->cost_ms < out.cost_ms) {
    greedy->kept_earlier = true;
    return greedy;
  }
  return out;
}

double TreeCost(const ExtractionProblem& p, const std::vector<int>& pick, const std::vector<std::vector<int>>* uses) {
  // Children first, memoized per class; a class met again on the path is a cycle.
  std::vector<double> memo(p.class_id.size(), -1);
  std::vector<char> on_path(p.class_id.size(), 0);
  std::vector<std::pair<int, size_t>> stack;
  double total = 0;
  for (int root : p.roots) {
    if (root < 0 || root >= static_cast<int>(pick.size()) || pick[root] < 0) return kInfinity;
    if (memo[root] < 0) {
      stack.push_back({root, 0});
      on_path[root] = 1;
      while (!stack.empty()) {
        auto& [c, next] = stack.back();
        const std::vector<int>& children = p.node_children[pick[c]];
        if (next < children.size()) {
          const int d = children[next++];
          if (memo[d] >= 0) continue;
          if (on_path[d] || d >= static_cast<int>(pick.size()) || pick[d] < 0) return kInfinity;
          on_path[d] = 1;
          stack.push_back({d, 0});
          continue;
        }
        const int n = pick[c];
        double cost = p.node_cost[n];
        for (size_t i = 0; i < children.size(); ++i) {
          const int times = uses != nullptr && n < static_cast<int>(uses->size()) ? (*uses)[n][i] : 1;
          cost += times * memo[children[i]];
        }
        memo[c] = cost;
        on_path[c] = 0;
        stack.pop_back();
      }
    }
    total += memo[root];
  }
  return total;
}

}  // namespace taso::optimizer
