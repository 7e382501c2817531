// Which e-nodes the ILP extraction hands to CBC: bounds and dominance
// pruning, and the domain left after it (see extract.h for the formulation).
#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "optimizer/eqsat/extract_internal.h"
#include "optimizer/eqsat/ilp_internal.h"

namespace taso::optimizer::ilp_internal {

using extract_internal::StronglyConnectedComponents;

std::vector<int> ClassComponents(const ExtractionProblem& p, const std::vector<bool>& usable) {
  std::vector<std::vector<int>> adj(p.class_id.size());
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (!usable[n]) continue;
    for (int d : p.node_children[n]) adj[p.node_class[n]].push_back(d);
  }
  return StronglyConnectedComponents(adj);
}

NeededSets::NeededSets(const ExtractionProblem& p, const std::vector<bool>& usable)
    : classes_(p.class_id.size()), words_((classes_ + 63) / 64), bits_(new uint64_t[classes_ * words_]) {
  const std::vector<int> comp = ClassComponents(p, usable);
  std::vector<std::vector<int>> members(classes_);
  for (size_t c = 0; c < classes_; ++c) members[comp[c]].push_back(static_cast<int>(c));
  std::vector<uint64_t> meet(words_), join(words_);
  for (const std::vector<int>& group : members) {
    // Inside a component, from "every class" down; elsewhere the children
    // are final already.
    for (int c : group) {
      if (group.size() > 1) std::fill(bits_.get() + c * words_, bits_.get() + (c + 1) * words_, ~uint64_t{0});
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int c : group) {
        bool first = true;
        for (int n : p.class_nodes[c]) {
          const std::vector<int>& children = p.node_children[n];
          if (!usable[n] || std::binary_search(children.begin(), children.end(), c)) continue;
          // The union of the children's sets, into meet (first e-node) or join.
          std::vector<uint64_t>& into = first ? meet : join;
          if (children.empty()) {
            std::fill(into.begin(), into.end(), 0);
          } else {
            std::copy(of(children[0]), of(children[0]) + words_, into.begin());
            for (size_t k = 1; k < children.size(); ++k) Or(into.data(), of(children[k]));
          }
          if (!first) {
            for (size_t w = 0; w < words_; ++w) meet[w] &= join[w];
          }
          first = false;
        }
        if (first) std::fill(meet.begin(), meet.end(), ~uint64_t{0});  // no e-node: no choice at all
        if (classes_ % 64 != 0) meet.back() &= (uint64_t{1} << (classes_ % 64)) - 1;  // only classes
        meet[c / 64] |= uint64_t{1} << (c % 64);
        uint64_t* mine = bits_.get() + c * words_;
        if (group.size() == 1 || !std::equal(meet.begin(), meet.end(), mine)) {
          std::copy(meet.begin(), meet.end(), mine);
          changed = group.size() > 1;
        }
      }
    }
  }
  must_.assign(words_, 0);
  for (int r : p.roots) Or(must_.data(), of(r));
}

std::vector<double> AcyclicBounds(const ExtractionProblem& p, const std::vector<bool>& usable) {
  std::vector<double> bound(p.class_id.size(), kInfinity);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < p.node_id.size(); ++n) {
      if (!usable[n]) continue;
      double b = p.node_cost[n];
      for (int d : p.node_children[n]) b = std::max(b, p.node_cost[n] + bound[d]);
      if (b < bound[p.node_class[n]]) {
        bound[p.node_class[n]] = b;
        changed = true;
      }
    }
  }
  return bound;
}

namespace {

// Which e-nodes CBC needs to see. An optimal choice (and, with an upper
// bound, any choice at most that dear) uses none of the others:
//  - bounds: an acyclic choice for a class costs at least its e-node's cost
//    plus its dearest child's bound (children may share), so an e-node whose
//    bound exceeds the upper bound is in no choice that cheap; one with no
//    acyclic choice at all (+infinity) is in none.
//  - dominance, between e-nodes m and n of one class c: m can replace n in
//    any choice when cost(m) <= cost(n) and m reads a subset of n's classes
//    (its edges are a subset: still acyclic), or when cost(m) plus what m's
//    other classes add at most is below cost(n), provided those classes are
//    not on a cycle with c (so nothing they read can lead back to it). What
//    a class adds at most is its greedy tree cost with the must classes
//    free, or nothing for c's needed classes (the choice has them already).
//    The replacement lowers the cost, or keeps it and moves c to an e-node
//    earlier in a fixed order, so an optimal choice least in that order
//    uses no dominated e-node.
struct PruneResult {
  std::vector<bool> alive;
  int by_bound = 0, by_dominance = 0;
};

PruneResult Prune(const ExtractionProblem& p, double upper_bound) {
  const size_t num_nodes = p.node_id.size(), num_classes = p.class_id.size();
  PruneResult out{std::vector<bool>(num_nodes, true)};
  std::vector<bool>& alive = out.alive;
  for (size_t n = 0; n < num_nodes; ++n) {
    const std::vector<int>& ch = p.node_children[n];
    alive[n] = !std::binary_search(ch.begin(), ch.end(), p.node_class[n]);  // never acyclic
  }
  const std::vector<double> bound = AcyclicBounds(p, alive);
  auto node_bound = [&](size_t n) {
    double worst = 0;
    for (int d : p.node_children[n]) worst = std::max(worst, bound[d]);
    return p.node_cost[n] + worst;
  };
  const double slack = 1e-9 * (1 + std::abs(upper_bound));
  for (size_t n = 0; n < num_nodes; ++n) {
    const double b = node_bound(n);
    if (alive[n] && (b == kInfinity || b > upper_bound + slack)) {
      alive[n] = false;
      ++out.by_bound;
    }
  }
  const std::vector<int> comp = ClassComponents(p, alive);
  const NeededSets needed(p, alive);
  std::vector<bool> must(num_classes, false);
  for (size_t c = 0; c < num_classes; ++c) must[c] = NeededSets::Has(needed.must(), static_cast<int>(c));
  // Greedy tree costs with must classes free (strict improvements only, so
  // the choices behind them are acyclic).
  std::vector<double> extra(num_classes, kInfinity);
  for (size_t c = 0; c < num_classes; ++c) {
    if (must[c]) extra[c] = 0;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < num_nodes; ++n) {
      if (!alive[n] || must[p.node_class[n]]) continue;
      double total = p.node_cost[n];
      for (int d : p.node_children[n]) total += extra[d];
      if (total + 1e-12 < extra[p.node_class[n]]) {
        extra[p.node_class[n]] = total;
        changed = true;
      }
    }
  }

  constexpr double kStrict = 1e-9;  // ms: strictly cheaper, beyond rounding
  for (size_t c = 0; c < num_classes; ++c) {
    std::vector<int> order;
    for (int n : p.class_nodes[c]) {
      if (alive[n]) order.push_back(n);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (p.node_cost[a] != p.node_cost[b]) return p.node_cost[a] < p.node_cost[b];
      return p.node_children[a].size() < p.node_children[b].size();
    });
    // Classes a choice with c has anyway add nothing.
    std::vector<uint64_t> here_set(needed.of(static_cast<int>(c)), needed.of(static_cast<int>(c)) + needed.words());
    needed.Or(here_set.data(), needed.must());
    const uint64_t* here = here_set.data();
    auto adds = [&](int d) { return NeededSets::Has(here, d) ? 0.0 : extra[d]; };
    // Over the kept e-nodes, the least of their cost plus what all their
    // classes add, when none of those is on a cycle with c: it dominates any
    // e-node dearer than it, whatever that one reads.
    double least_full = kInfinity;
    std::vector<int> kept;
    for (int n : order) {
      bool dominated = least_full < p.node_cost[n] - kStrict;
      for (size_t k = 0; k < kept.size() && !dominated; ++k) {
        const int m = kept[k];
        const std::vector<int>& mine = p.node_children[m];
        const std::vector<int>& theirs = p.node_children[n];
        double added = p.node_cost[m];
        bool subset = true, off_cycle = true;
        for (int d : mine) {
          if (std::binary_search(theirs.begin(), theirs.end(), d)) continue;
          subset = false;
          off_cycle = off_cycle && comp[d] != comp[c];
          added += adds(d);
        }
        dominated = (subset && p.node_cost[m] <= p.node_cost[n]) ||
                    (off_cycle && added < p.node_cost[n] - kStrict);
      }
      if (dominated) {
        alive[n] = false;
        ++out.by_dominance;
        continue;
      }
      kept.push_back(n);
      double full = p.node_cost[n];
      for (int d : p.node_children[n]) full = comp[d] == comp[c] ? kInfinity : full + adds(d);
      least_full = std::min(least_full, full);
    }
  }
  return out;
}

// Drops e-nodes with no acyclic choice through the others (the needed sets
// are only sound over those) and e-nodes reading their own class.
void KeepAcyclicallyChoosable(const ExtractionProblem& p, std::vector<bool>& alive) {
  const size_t num_nodes = p.node_id.size();
  for (size_t n = 0; n < num_nodes; ++n) {
    const std::vector<int>& ch = p.node_children[n];
    alive[n] = alive[n] && !std::binary_search(ch.begin(), ch.end(), p.node_class[n]);
  }
  const std::vector<double> bound = AcyclicBounds(p, alive);
  for (size_t n = 0; n < num_nodes; ++n) {
    for (int d : p.node_children[n]) alive[n] = alive[n] && bound[d] < kInfinity;
  }
}

// The classes the roots reach through alive e-nodes.
std::vector<bool> ReachedClasses(const ExtractionProblem& p, const std::vector<bool>& alive) {
  std::vector<bool> reached(p.class_id.size(), false);
  std::vector<int> stack(p.roots.begin(), p.roots.end());
  while (!stack.empty()) {
    const int c = stack.back();
    stack.pop_back();
    if (reached[c]) continue;
    reached[c] = true;
    for (int n : p.class_nodes[c]) {
      if (!alive[n]) continue;
      for (int d : p.node_children[n]) stack.push_back(d);
    }
  }
  return reached;
}

}  // namespace

absl::StatusOr<IlpDomain> ChooseDomain(const ExtractionProblem& p, const ProblemChoice* best,
                                       const IlpSettings& settings, IlpStats& stats) {
  const size_t num_nodes = p.node_id.size(), num_classes = p.class_id.size();
  IlpDomain domain;
  std::vector<bool>& alive = domain.alive;
  alive.assign(num_nodes, true);
  if (settings.prune) {
    PruneResult pruned = Prune(p, best != nullptr ? best->cost_ms : kInfinity);
    alive = std::move(pruned.alive);
    stats.pruned_by_bound = pruned.by_bound;
    stats.pruned_by_dominance = pruned.by_dominance;
  }
  if (best != nullptr) {
    for (int n : best->pick) {
      if (n >= 0) alive[n] = true;
    }
  }
  KeepAcyclicallyChoosable(p, alive);
  domain.in_model = ReachedClasses(p, alive);
  for (size_t c = 0; c < num_classes; ++c) stats.model_classes += domain.in_model[c] ? 1 : 0;
  domain.class_alive.resize(num_classes);
  for (size_t n = 0; n < num_nodes; ++n) {
    alive[n] = alive[n] && domain.in_model[p.node_class[n]];
    if (alive[n]) domain.class_alive[p.node_class[n]].push_back(static_cast<int>(n));
  }
  for (int r : p.roots) {
    if (domain.class_alive[r].empty()) {
      return absl::NotFoundError(absl::StrCat("output class ", p.class_id[r], " has no acyclic e-node"));
    }
  }
  return domain;
}

}  // namespace taso::optimizer::ilp_internal
