// The ILP extraction (see extract.h for the formulation and why it has the
// rows it has): pruning, the model, and CBC.
#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/eqsat/extract_internal.h"

namespace taso::optimizer {

using extract_internal::FindCycles;
using extract_internal::GreedyPick;
using extract_internal::PickCost;
using extract_internal::RestrictPick;
using extract_internal::StronglyConnectedComponents;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Strongly connected components of the class graph through the given e-nodes.
std::vector<int> ClassComponents(const ExtractionProblem& p, const std::vector<bool>& usable) {
  std::vector<std::vector<int>> adj(p.class_id.size());
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (!usable[n]) continue;
    for (int d : p.node_children[n]) adj[p.node_class[n]].push_back(d);
  }
  return StronglyConnectedComponents(adj);
}

// needed(c): the classes every acyclic choice for c has: c, and per e-node
// the union of its children's, intersected over c's e-nodes (the greatest
// fixpoint, so cycles add nothing: by induction on a choice's depth, it has
// them all). Computed children first (components in Tarjan's order),
// iterating down from "every class" inside a component. must: the roots'
// (every choice has them).
class NeededSets {
 public:
  NeededSets(const ExtractionProblem& p, const std::vector<bool>& usable)
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
  size_t words() const { return words_; }
  const uint64_t* of(int c) const { return bits_.get() + c * words_; }
  const uint64_t* must() const { return must_.data(); }
  static bool Has(const uint64_t* set, int c) { return (set[c / 64] >> (c % 64)) & 1; }
  void Or(uint64_t* into, const uint64_t* from) const {
    for (size_t w = 0; w < words_; ++w) into[w] |= from[w];
  }
  // Calls f(c) for each class of the set.
  template <typename F>
  void ForEach(const uint64_t* set, F f) const {
    for (size_t w = 0; w < words_; ++w) {
      for (uint64_t bits = set[w]; bits != 0; bits &= bits - 1) f(static_cast<int>(w * 64 + __builtin_ctzll(bits)));
    }
  }

 private:
  size_t classes_, words_;
  std::unique_ptr<uint64_t[]> bits_;  // per class, words_ words
  std::vector<uint64_t> must_;
};

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

// Per class, a lower bound of the cost of an acyclic choice for it through
// usable e-nodes: the least over its e-nodes of their cost plus their
// dearest child's bound (children may share); +infinity where there is none.
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

// Elementary cycles of a directed graph among vertices of one strongly
// connected component, each from its least vertex; at most `limit` cycles
// and `max_steps` search steps (`complete` says whether all were found).
std::vector<std::vector<int>> ElementaryCycles(const std::vector<std::vector<int>>& adj, const std::vector<int>& comp,
                                               size_t limit, int64_t max_steps, bool* complete) {
  std::vector<std::vector<int>> cycles;
  *complete = true;
  const int n = static_cast<int>(adj.size());
  std::vector<bool> on_path(n, false);
  int64_t steps = 0;
  for (int s = 0; s < n; ++s) {
    bool has_cycle = false;
    for (int w : adj[s]) has_cycle = has_cycle || (comp[w] == comp[s] && w >= s);
    if (!has_cycle) continue;
    std::vector<std::pair<int, size_t>> path = {{s, 0}};
    on_path[s] = true;
    while (!path.empty()) {
      if (++steps > max_steps || cycles.size() >= limit) {
        *complete = false;
        for (auto& [v, next] : path) on_path[v] = false;
        return cycles;
      }
      auto& [v, next] = path.back();
      if (next < adj[v].size()) {
        const int w = adj[v][next++];
        if (comp[w] != comp[s] || w < s) continue;
        if (w == s) {
          std::vector<int> cycle;
          for (const auto& step : path) cycle.push_back(step.first);
          cycles.push_back(std::move(cycle));
        } else if (!on_path[w]) {
          on_path[w] = true;
          path.push_back({w, 0});
        }
        continue;
      }
      on_path[v] = false;
      path.pop_back();
    }
  }
  return cycles;
}

// A linear program gathered first and handed to CBC in one call: adding rows
// one at a time copies the matrix each time, which is quadratic.
class LinearProgram {
 public:
  int AddColumn(double lower, double upper, double objective, bool integer) {
    col_lower_.push_back(lower);
    col_upper_.push_back(upper);
    objective_.push_back(objective);
    integer_.push_back(integer);
    entries_.emplace_back();
    return static_cast<int>(entries_.size()) - 1;
  }
  void AddRow(const std::vector<int>& cols, const std::vector<double>& coefs, double lower, double upper) {
    const int row = static_cast<int>(row_lower_.size());
    for (size_t k = 0; k < cols.size(); ++k) entries_[cols[k]].push_back({row, coefs[k]});
    row_lower_.push_back(lower == -kInfinity ? -std::numeric_limits<double>::max() : lower);
    row_upper_.push_back(upper == kInfinity ? std::numeric_limits<double>::max() : upper);
    nonzeros_ += static_cast<int>(cols.size());
  }
  void SetLower(int col, double lower) { col_lower_[col] = lower; }
  void LoadInto(Cbc_Model* model) const {
    std::vector<CoinBigIndex> start = {0};
    std::vector<int> index;
    std::vector<double> value;
    for (const auto& column : entries_) {
      for (const auto& [row, coef] : column) {
        index.push_back(row);
        value.push_back(coef);
      }
      start.push_back(static_cast<CoinBigIndex>(index.size()));
    }
    Cbc_loadProblem(model, static_cast<int>(entries_.size()), static_cast<int>(row_lower_.size()), start.data(),
                    index.data(), value.data(), col_lower_.data(), col_upper_.data(), objective_.data(),
                    row_lower_.data(), row_upper_.data());
    for (size_t col = 0; col < integer_.size(); ++col) {
      if (integer_[col]) Cbc_setInteger(model, static_cast<int>(col));
    }
  }
  int columns() const { return static_cast<int>(entries_.size()); }
  int rows() const { return static_cast<int>(row_lower_.size()); }
  int nonzeros() const { return nonzeros_; }

 private:
  std::vector<double> col_lower_, col_upper_, objective_, row_lower_, row_upper_;
  std::vector<bool> integer_;
  std::vector<std::vector<std::pair<int, double>>> entries_;  // per column: (row, coefficient)
  int nonzeros_ = 0;
};

// Always: CBC's zero-half cut separator alone took 7-15 GB on ResNet-50's
// and Inception-v3's e-graphs (the old model), and calls exit() when an
// allocation fails.
constexpr std::pair<const char*, const char*> kCbcParameters[] = {
    {"timeMode", "elapsed"},
    {"zeroHalfCuts", "off"},
};

struct CbcDeleter {
  void operator()(Cbc_Model* model) const { Cbc_deleteModel(model); }
};

}  // namespace

absl::StatusOr<ProblemChoice> SolveIlp(const ExtractionProblem& p, absl::Duration time_limit,
                                       const ProblemChoice* warm_start, const IlpSettings& settings,
                                       IlpStats* stats) {
  const absl::Time deadline = absl::Now() + time_limit;
  IlpStats local_stats;
  IlpStats& st = stats != nullptr ? *stats : local_stats;
  st = IlpStats{};
  const size_t num_nodes = p.node_id.size(), num_classes = p.class_id.size();
  st.classes = static_cast<int>(num_classes);
  st.enodes = static_cast<int>(num_nodes);
  for (int r : p.roots) {
    if (p.class_nodes[r].empty()) {
      return absl::NotFoundError(absl::StrCat("output class ", p.class_id[r], " has no e-node of known cost"));
    }
  }
  // The best acyclic choice known: the warm start, else greedy's.
  std::optional<ProblemChoice> best;
  if (warm_start != nullptr) {
    best = *warm_start;
  } else if (auto greedy = SolveGreedy(p); greedy.ok()) {
    best = *std::move(greedy);
  }
  if (best.has_value()) {
    best->optimal = best->time_limited = false;
    if (best->pick.size() != num_classes || !RestrictPick(p, best->pick).ok() || !FindCycles(p, best->pick, 1).empty()) {
      best.reset();
    }
  }
  if (best.has_value()) best->cost_ms = PickCost(p, best->pick);

  // Which e-nodes CBC sees: the pruned ones, and the starting point's.
  std::vector<bool> alive(num_nodes, true);
  if (settings.prune) {
    PruneResult pruned = Prune(p, best.has_value() ? best->cost_ms : kInfinity);
    alive = std::move(pruned.alive);
    st.pruned_by_bound = pruned.by_bound;
    st.pruned_by_dominance = pruned.by_dominance;
  }
  if (best.has_value()) {
    for (int n : best->pick) {
      if (n >= 0) alive[n] = true;
    }
  }
  {
    // Only e-nodes with an acyclic choice through the remaining e-nodes (the
    // needed sets below are only sound over those), and none reading its
    // own class.
    for (size_t n = 0; n < num_nodes; ++n) {
      const std::vector<int>& ch = p.node_children[n];
      alive[n] = alive[n] && !std::binary_search(ch.begin(), ch.end(), p.node_class[n]);
    }
    const std::vector<double> bound = AcyclicBounds(p, alive);
    for (size_t n = 0; n < num_nodes; ++n) {
      for (int d : p.node_children[n]) alive[n] = alive[n] && bound[d] < kInfinity;
    }
  }
  // Classes the roots reach through those e-nodes.
  std::vector<bool> in_model(num_classes, false);
  {
    std::vector<int> stack(p.roots.begin(), p.roots.end());
    while (!stack.empty()) {
      const int c = stack.back();
      stack.pop_back();
      if (in_model[c]) continue;
      in_model[c] = true;
      ++st.model_classes;
      for (int n : p.class_nodes[c]) {
        if (!alive[n]) continue;
        for (int d : p.node_children[n]) stack.push_back(d);
      }
    }
  }
  for (size_t n = 0; n < num_nodes; ++n) alive[n] = alive[n] && in_model[p.node_class[n]];
  std::vector<std::vector<int>> class_alive(num_classes);
  for (size_t n = 0; n < num_nodes; ++n) {
    if (alive[n]) class_alive[p.node_class[n]].push_back(static_cast<int>(n));
  }
  for (int r : p.roots) {
    if (class_alive[r].empty()) {
      return absl::NotFoundError(absl::StrCat("output class ", p.class_id[r], " has no acyclic e-node"));
    }
  }

  // The base model: a binary x per e-node (its cost in microseconds, which
  // keeps CBC's absolute tolerances far below real differences). With class
  // variables, y_c = sum of c's x (a class of one e-node uses that x), roots
  // have y = 1 and a chosen e-node needs its children: x <= y_child, or
  // y_c <= y_child for a child every e-node of c reads. Without, the sums
  // are written out in each row.
  LinearProgram base;
  std::vector<int> column(num_nodes, -1);
  std::vector<int> columns_node;
  for (size_t n = 0; n < num_nodes; ++n) {
    if (!alive[n]) continue;
    column[n] = base.AddColumn(0, 1, p.node_cost[n] * 1000, /*integer=*/true);
    columns_node.push_back(static_cast<int>(n));
  }
  st.model_enodes = static_cast<int>(columns_node.size());
  auto ones = [](size_t k) { return std::vector<double>(k, 1.0); };
  auto columns_of = [&](int c) {
    std::vector<int> cols;
    for (int n : class_alive[c]) cols.push_back(column[n]);
    return cols;
  };
  const std::set<int> root_set(p.roots.begin(), p.roots.end());
  // The classes every e-node of c reads.
  auto common_children = [&](int c) {
    std::vector<int> common = p.node_children[class_alive[c][0]];
    for (int n : class_alive[c]) {
      std::vector<int> both;
      std::set_intersection(common.begin(), common.end(), p.node_children[n].begin(), p.node_children[n].end(),
                            std::back_inserter(both));
      common = std::move(both);
    }
    return common;
  };
  if (settings.class_variables) {
    std::vector<int> class_col(num_classes, -1);
    for (size_t c = 0; c < num_classes; ++c) {
      if (!in_model[c]) continue;
      if (class_alive[c].size() == 1) {
        class_col[c] = column[class_alive[c][0]];
        continue;
      }
      class_col[c] = base.AddColumn(0, 1, 0, /*integer=*/false);
      std::vector<int> cols = columns_of(static_cast<int>(c));
      std::vector<double> coefs = ones(cols.size());
      cols.push_back(class_col[c]);
      coefs.push_back(-1.0);
      base.AddRow(cols, coefs, 0, 0);
    }
    for (int r : root_set) base.SetLower(class_col[r], 1);
    if (settings.needed_rows) {
      // Every acyclic choice has the must classes, and with a class its
      // needed classes: y = 1 for the former, y_c <= y_g for the latter
      // (except what c's common children already imply). Cycles can fake
      // a class's children in the relaxation, not these.
      const NeededSets needed(p, alive);
      std::vector<uint64_t> implied(needed.words());
      for (size_t c = 0; c < num_classes; ++c) {
        if (!in_model[c]) continue;
        const int ci = static_cast<int>(c);
        if (NeededSets::Has(needed.must(), ci)) {
          base.SetLower(class_col[c], 1);
          ++st.must_classes;
          continue;
        }
        std::copy(needed.of(ci), needed.of(ci) + needed.words(), implied.begin());
        for (int d : common_children(ci)) {
          for (size_t w = 0; w < implied.size(); ++w) implied[w] &= ~needed.of(d)[w];
        }
        for (size_t w = 0; w < implied.size(); ++w) implied[w] &= ~needed.must()[w];
        implied[c / 64] &= ~(uint64_t{1} << (c % 64));
        needed.ForEach(implied.data(), [&](int g) {
          base.AddRow({class_col[c], class_col[g]}, {1.0, -1.0}, -kInfinity, 0);
          ++st.needed_rows;
        });
      }
    }
    for (size_t c = 0; c < num_classes; ++c) {
      if (!in_model[c]) continue;
      std::vector<int> common;
      if (class_alive[c].size() >= 2) {
        common = common_children(static_cast<int>(c));
        for (int d : common) base.AddRow({class_col[c], class_col[d]}, {1.0, -1.0}, -kInfinity, 0);
      }
      for (int n : class_alive[c]) {
        for (int d : p.node_children[n]) {
          if (std::binary_search(common.begin(), common.end(), d)) continue;
          base.AddRow({column[n], class_col[d]}, {1.0, -1.0}, -kInfinity, 0);
        }
      }
    }
  } else {
    for (int r : root_set) {
      const std::vector<int> cols = columns_of(r);
      base.AddRow(cols, ones(cols.size()), 1, kInfinity);
    }
    for (size_t c = 0; c < num_classes; ++c) {
      const std::vector<int> cols = columns_of(static_cast<int>(c));
      if (cols.size() >= 2) base.AddRow(cols, ones(cols.size()), -kInfinity, 1);
    }
    for (int n : columns_node) {
      for (int d : p.node_children[n]) {
        std::vector<int> cols = columns_of(d);
        std::vector<double> coefs = ones(cols.size());
        cols.push_back(column[n]);
        coefs.push_back(-1.0);
        base.AddRow(cols, coefs, 0, kInfinity);
      }
    }
  }
  // Cycles can only run inside a strongly connected component of the class
  // graph (through the model's e-nodes).
  const std::vector<int> comp = ClassComponents(p, alive);
  std::vector<std::vector<int>> cuts;  // cycles to forbid, as classes
  std::set<std::vector<int>> cut_set;
  if (settings.acyclicity == IlpSettings::Acyclicity::kOrderVariables) {
    // Tensat's: an order variable t in [0, 1] per class of a component, and
    // t_class - t_child - 2 x >= eps - 2 per e-node x and child in its
    // component (binding when x = 1).
    std::vector<int> comp_size(num_classes + 1, 0);
    for (size_t c = 0; c < num_classes; ++c) comp_size[comp[c]] += in_model[c] ? 1 : 0;
    std::vector<int> order(num_classes, -1);
    for (size_t c = 0; c < num_classes; ++c) {
      if (in_model[c] && comp_size[comp[c]] >= 2) order[c] = base.AddColumn(0, 1, 0, /*integer=*/false);
    }
    for (int n : columns_node) {
      const int c = p.node_class[n];
      for (int d : p.node_children[n]) {
        if (comp[c] != comp[d]) continue;
        const double eps = 1.0 / (comp_size[comp[c]] + 1);
        base.AddRow({order[c], order[d], column[n]}, {1.0, -1.0, -2.0}, eps - 2.0, kInfinity);
      }
    }
  } else {
    std::vector<int> comp_size(num_classes + 1, 0);
    for (size_t c = 0; c < num_classes; ++c) comp_size[comp[c]] += in_model[c] ? 1 : 0;
    // Class edges inside components: (class, child) -> the columns of the
    // class's e-nodes reading the child.
    std::map<std::pair<int, int>, std::vector<int>> inner;
    for (int n : columns_node) {
      const int c = p.node_class[n];
      for (int d : p.node_children[n]) {
        if (comp[d] == comp[c]) inner[{c, d}].push_back(column[n]);
      }
    }
    std::vector<bool> ordered(num_classes + 1, false);  // components given a linear order
    if (settings.acyclicity == IlpSettings::Acyclicity::kLinearOrder) {
      // A linear order of each small component's classes: u_ij (i < j) is 1
      // when i comes before j (u_ji = 1 - u_ij), transitive (for i < j < k:
      // u_ij + u_jk - u_ik <= 1 and u_ik - u_ij - u_jk <= 0), and the e-nodes
      // of class c reading d sum to at most "d before c". Cycles through
      // chosen e-nodes contradict any order, even a fractional one, so only
      // the e-nodes need to be integer; the relaxation is much tighter than
      // with cycle cuts (each inner edge at most 1/2 rather than (k-1)/k).
      std::vector<std::vector<int>> members(num_classes + 1);
      for (size_t c = 0; c < num_classes; ++c) {
        if (in_model[c] && comp_size[comp[c]] >= 2 && comp_size[comp[c]] <= settings.linear_order_limit) {
          members[comp[c]].push_back(static_cast<int>(c));
        }
      }
      std::vector<std::vector<std::pair<const std::pair<int, int>, std::vector<int>>*>> edges(num_classes + 1);
      for (auto& edge : inner) edges[comp[edge.first.first]].push_back(&edge);
      std::vector<int> position(num_classes, -1);
      for (size_t k = 0; k < members.size(); ++k) {
        const std::vector<int>& group = members[k];
        if (group.empty()) continue;
        ordered[k] = true;
        ++st.ordered_components;
        const int g = static_cast<int>(group.size());
        for (int i = 0; i < g; ++i) position[group[i]] = i;
        std::vector<int> u(g * g, -1);
        for (int i = 0; i < g; ++i) {
          for (int j = i + 1; j < g; ++j) u[i * g + j] = base.AddColumn(0, 1, 0, /*integer=*/false);
        }
        for (int i = 0; i < g; ++i) {
          for (int j = i + 1; j < g; ++j) {
            for (int l = j + 1; l < g; ++l) {
              base.AddRow({u[i * g + j], u[j * g + l], u[i * g + l]}, {1.0, 1.0, -1.0}, -kInfinity, 1);
              base.AddRow({u[i * g + l], u[i * g + j], u[j * g + l]}, {1.0, -1.0, -1.0}, -kInfinity, 0);
            }
          }
        }
        for (const auto* edge : edges[k]) {
          const auto [c, d] = edge->first;
          const std::vector<int>& cols = edge->second;
          const int i = position[d], j = position[c];  // d must come before c
          std::vector<int> row = cols;
          std::vector<double> coefs = ones(cols.size());
          if (i < j) {
            row.push_back(u[i * g + j]);  // sum x - u_dc <= 0
            coefs.push_back(-1.0);
            base.AddRow(row, coefs, -kInfinity, 0);
          } else {
            row.push_back(u[j * g + i]);  // sum x <= 1 - u_cd
            coefs.push_back(1.0);
            base.AddRow(row, coefs, -kInfinity, 1);
          }
        }
      }
    }
    // The other components' elementary cycles, forbidden up front where
    // there are few; the rest lazily.
    std::vector<std::vector<int>> adj(num_classes);
    for (const auto& [edge, cols] : inner) {
      if (!ordered[comp[edge.first]] && settings.cycle_limit > 0) adj[edge.first].push_back(edge.second);
    }
    for (auto& a : adj) {
      std::sort(a.begin(), a.end());
      a.erase(std::unique(a.begin(), a.end()), a.end());
    }
    bool complete = false;
    for (std::vector<int>& cycle : ElementaryCycles(adj, comp, settings.cycle_limit, 1000000, &complete)) {
      if (cut_set.insert(cycle).second) cuts.push_back(std::move(cycle));
    }
    st.upfront_cycles = static_cast<int>(cuts.size());
    st.all_cycles_upfront = complete;
  }
  auto add_cut = [&](LinearProgram& lp, const std::vector<int>& cycle) {
    // The classes of the cycle may not all choose an e-node reading the next.
    std::vector<int> cols;
    for (size_t k = 0; k < cycle.size(); ++k) {
      const int next = cycle[(k + 1) % cycle.size()];
      for (int n : class_alive[cycle[k]]) {
        const std::vector<int>& ch = p.node_children[n];
        if (std::binary_search(ch.begin(), ch.end(), next)) cols.push_back(column[n]);
      }
    }
    lp.AddRow(cols, ones(cols.size()), -kInfinity, static_cast<double>(cycle.size()) - 1);
  };
  for (const std::vector<int>& cycle : cuts) add_cut(base, cycle);
  const size_t base_cuts = cuts.size();

  st.prepare_seconds = absl::ToDoubleSeconds(time_limit - (deadline - absl::Now()));
  // Solve; with lazy cuts, forbid the cycles of each solution and solve again.
  bool proved = false, timed_out = false;
  std::string failure;
  while (failure.empty()) {
    const double remaining = absl::ToDoubleSeconds(deadline - absl::Now());
    if (remaining < 0.05) {
      timed_out = true;
      break;
    }
    LinearProgram lp = base;
    for (size_t k = base_cuts; k < cuts.size(); ++k) add_cut(lp, cuts[k]);
    st.columns = lp.columns();
    st.rows = lp.rows();
    st.nonzeros = lp.nonzeros();
    std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
    if (model == nullptr) return absl::InternalError("CBC could not create a model");
    Cbc_Model* m = model.get();
    Cbc_setLogLevel(m, settings.log_level);
    lp.LoadInto(m);
    const bool cutoff = best.has_value() && settings.warm_start == IlpSettings::WarmStart::kCutoff;
    if (cutoff) {
      Cbc_setCutoff(m, best->cost_ms * 1000 * (1 + 1e-9));
    } else if (best.has_value() && settings.warm_start == IlpSettings::WarmStart::kMipStart) {
      // The e-nodes' values; CBC completes the continuous columns.
      std::vector<int> cols;
      std::vector<double> values;
      for (size_t col = 0; col < columns_node.size(); ++col) {
        const int n = columns_node[col];
        cols.push_back(static_cast<int>(col));
        values.push_back(best->pick[p.node_class[n]] == n ? 1.0 : 0.0);
      }
      Cbc_setMIPStartI(m, static_cast<int>(cols.size()), cols.data(), values.data());
    }
    for (const auto& [name, value] : kCbcParameters) Cbc_setParameter(m, name, value);
    for (const auto& [name, value] : settings.cbc_parameters) Cbc_setParameter(m, name.c_str(), value.c_str());
    Cbc_setMaximumSeconds(m, remaining);
    Cbc_solve(m);
    ++st.solves;
    // CBC's statuses are not to be trusted once it ran out of time (cut
    // short in preprocessing it can call a feasible problem infeasible), so
    // the clock has the last word.
    const bool out_of_time = Cbc_isSecondsLimitReached(m) != 0 || absl::Now() >= deadline;
    const bool finished = !out_of_time && Cbc_status(m) == 0;
    const double* solution = Cbc_bestSolution(m);
    if (solution == nullptr) {
      if (out_of_time) {
        timed_out = true;
      } else if (cutoff && finished && Cbc_isProvenInfeasible(m)) {
        proved = true;  // nothing is cheaper than the best choice known
        st.lower_bound_ms = best->cost_ms;
      } else {
        failure = absl::StrCat("CBC found no solution (status ", Cbc_status(m), ", secondary ",
                               Cbc_secondaryStatus(m), ")");
      }
      break;
    }
    std::vector<int> pick(num_classes, -1);
    for (size_t col = 0; col < columns_node.size(); ++col) {
      if (solution[col] > 0.5) pick[p.node_class[columns_node[col]]] = columns_node[col];
    }
    if (absl::Status s = RestrictPick(p, pick); !s.ok()) {
      failure = absl::StrCat("CBC's solution is incomplete: ", s.message());
      break;
    }
    const bool optimal = finished && Cbc_isProvenOptimal(m) != 0;
    std::vector<std::vector<int>> cycles = FindCycles(p, pick);
    if (cycles.empty()) {
      const double cost = PickCost(p, pick);
      if (!best.has_value() || cost < best->cost_ms) best = ProblemChoice{pick, cost, false, false};
      proved = optimal;
      timed_out = out_of_time;
      st.lower_bound_ms = optimal ? cost : std::max(st.lower_bound_ms, Cbc_getBestPossibleObjValue(m) / 1000);
      break;
    }
    // Not expected with order variables or a linear order: they forbid cycles.
    if (settings.acyclicity == IlpSettings::Acyclicity::kOrderVariables) failure = "CBC's solution is cyclic";
    ++st.cyclic_solutions;
    if (optimal) st.lower_bound_ms = std::max(st.lower_bound_ms, Cbc_getObjValue(m) / 1000);
    // Repair: greedy preferring the e-nodes CBC chose (free, as if shared).
    std::vector<double> hinted(num_nodes);
    std::vector<bool> chosen(num_nodes, false);
    for (int n : pick) {
      if (n >= 0) chosen[n] = true;
    }
    for (size_t n = 0; n < num_nodes; ++n) hinted[n] = chosen[n] ? 0.0 : p.node_cost[n];
    std::vector<int> repaired = GreedyPick(p, hinted, alive);
    if (RestrictPick(p, repaired).ok() && FindCycles(p, repaired, 1).empty()) {
      const double cost = PickCost(p, repaired);
      if (!best.has_value() || cost < best->cost_ms) best = ProblemChoice{repaired, cost, false, false};
    }
    int added = 0;
    for (std::vector<int>& cycle : cycles) {
      // One rotation per cycle, starting at its least class.
      std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
      if (cut_set.insert(cycle).second) {
        cuts.push_back(cycle);
        ++added;
      }
    }
    st.cycle_cuts += added;
    if (added == 0 && failure.empty()) failure = "a cycle came back after its cut";  // not expected
    if (out_of_time) {
      timed_out = true;
      break;
    }
  }
  st.outcome = proved ? "optimal" : timed_out ? "time limit" : failure.empty() ? "stopped" : failure;
  if (!best.has_value()) {
    if (timed_out) return absl::UnavailableError("CBC found no acyclic solution within its time limit");
    return absl::InternalError(failure.empty() ? "CBC found no acyclic solution" : failure);
  }
  best->optimal = proved;
  best->time_limited = timed_out && !proved;
  return *best;
}

}  // namespace taso::optimizer
