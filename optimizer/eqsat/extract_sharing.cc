// Sharing moves (ImproveBySharing in extract.h): a local search from a choice
// toward programs in which several classes read one new value at once.
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/eqsat/extract_internal.h"

namespace taso::optimizer {
namespace {

using extract_internal::GreedyPick;

// A choice under evaluation: the current picks, with `overlay` in front and
// `fill` behind for the classes neither has.
struct Overlay {
  const std::vector<int>& current;
  const std::vector<int>& fill;
  const std::map<int, int>& overlay;
  int operator()(int c) const {
    auto it = overlay.find(c);
    if (it != overlay.end()) return it->second;
    return current[c] >= 0 ? current[c] : fill[c];
  }
};

// The classes the roots need under `pick`, each once, or empty when one has
// no pick or the picks form a cycle. Iterative, so deep programs do not
// exhaust the stack.
std::vector<int> Reached(const ExtractionProblem& p, const Overlay& pick, std::vector<char>& state) {
  std::fill(state.begin(), state.end(), 0);  // 0 new, 1 on the path, 2 done
  std::vector<int> order;
  std::vector<std::pair<int, size_t>> stack;
  for (int root : p.roots) {
    if (state[root] == 2) continue;
    if (pick(root) < 0) return {};
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      const std::vector<int>& children = p.node_children[pick(c)];
      if (next == children.size()) {
        state[c] = 2;
        order.push_back(c);
        stack.pop_back();
        continue;
      }
      const int child = children[next++];
      if (state[child] == 2) continue;
      if (state[child] == 1 || pick(child) < 0) return {};  // a cycle, or a class without a program
      state[child] = 1;
      stack.push_back({child, 0});
    }
  }
  return order;
}

}  // namespace

ProblemChoice ImproveBySharing(const ExtractionProblem& p, const ProblemChoice& start, absl::Time deadline,
                               int* moves) {
  if (moves != nullptr) *moves = 0;
  const int classes = static_cast<int>(p.class_id.size());
  if (start.pick.size() != p.class_id.size()) return start;
  std::vector<std::vector<int>> readers(classes);  // per class: the e-nodes reading it
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    for (int child : p.node_children[n]) readers[child].push_back(static_cast<int>(n));
  }
  const std::vector<int> fill = GreedyPick(p, p.node_cost, {});
  std::vector<int> current = start.pick;
  double current_cost = start.cost_ms;
  std::vector<char> state(classes);
  const std::map<int, int> none;
  if (Reached(p, Overlay{current, fill, none}, state).empty()) return start;  // not a complete acyclic choice
  // Best improvement: each sweep keeps its cheapest move. Taking the first
  // that pays locks in small merges (an RNN gate's x and h products) whose
  // picks then no longer read what a larger one (the steps' inputs
  // batched) would share.
  auto result = [&] { return ProblemChoice{current, current_cost, false, false}; };
  while (true) {
    std::map<int, int> best_overlay;
    std::vector<int> best_reached;
    double best_cost = current_cost - 1e-9;
    for (int shared = 0; shared < classes; ++shared) {
      if (absl::Now() >= deadline) return result();
      // Every needed class that can read `shared` switches to its cheapest
      // e-node that does (unless its pick reads it already).
      std::map<int, int> overlay;
      for (int n : readers[shared]) {
        const int c = p.node_class[n];
        const int now = current[c];
        if (now < 0 || n == now) continue;
        const std::vector<int>& reads = p.node_children[now];
        if (std::find(reads.begin(), reads.end(), shared) != reads.end()) continue;
        auto [it, fresh] = overlay.insert({c, n});
        if (!fresh && p.node_cost[n] < p.node_cost[it->second]) it->second = n;
      }
      if (overlay.empty()) continue;
      const Overlay pick{current, fill, overlay};
      std::vector<int> reached = Reached(p, pick, state);
      if (reached.empty()) continue;
      double cost = 0;
      for (int c : reached) cost += p.node_cost[pick(c)];
      if (cost >= best_cost) continue;
      best_cost = cost;
      best_overlay = std::move(overlay);
      best_reached = std::move(reached);
    }
    if (best_overlay.empty()) break;
    const Overlay pick{current, fill, best_overlay};
    std::vector<int> next(classes, -1);
    for (int c : best_reached) next[c] = pick(c);
    current = std::move(next);
    current_cost = best_cost;
    if (moves != nullptr) ++*moves;
  }
  return result();
}

}  // namespace taso::optimizer
