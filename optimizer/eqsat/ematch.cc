#include "optimizer/eqsat/ematch.h"

#include <algorithm>
#include <set>

namespace taso::optimizer {
namespace {

// A class for each pattern node (-1: not bound), and the class each pattern
// output matched.
struct Assignment {
  std::vector<EClassId> classes;
  std::vector<EClassId> roots;
  bool swapped = false;  // some commuting operands were read in reverse
};

// Backtracking search for the substitutions under which one pattern tensor
// matches one class. Goals are (pattern tensor, class) pairs still to check.
class Enumerator {
 public:
  Enumerator(const CompiledPattern& pattern, const EMatchIndex& index)
      : pattern_(pattern), p_(pattern.rule().lhs()), eg_(index.egraph()) {
    assign_.assign(p_.num_nodes(), -1);
    weight_var_.assign(p_.num_nodes(), false);
    for (const Node& n : p_.nodes()) {
      if (!IsInputOrWeight(n.kind)) continue;
      const auto& w = pattern.rule().weight_variables;
      weight_var_[n.id] = std::find(w.begin(), w.end(), n.name) != w.end();
    }
  }

  // Appends every way `ref` matches `root` (at most up to `limit` in total),
  // and to `swapped` whether it read some commuting operands in reverse.
  void Run(TensorRef ref, EClassId root, int limit, std::vector<std::vector<EClassId>>* out,
           std::vector<bool>* swapped) {
    out_ = out;
    swapped_out_ = swapped;
    limit_ = limit;
    std::vector<Goal> goals = {{ref, root}};
    Solve(goals);
  }

 private:
  struct Goal {
    TensorRef ref;
    EClassId cls;
  };

  bool Full() const { return static_cast<int>(out_->size()) >= limit_; }

  void Solve(std::vector<Goal>& goals) {
    if (Full()) return;
    if (goals.empty()) {
      out_->push_back(assign_);
      swapped_out_->push_back(swaps_ > 0);
      return;
    }
    const Goal goal = goals.back();
    goals.pop_back();
    const Node& pn = p_.node(goal.ref.node);
    if (IsInputOrWeight(pn.kind)) {
      EClassId& slot = assign_[pn.id];
      if (slot == goal.cls) {
        Solve(goals);
      } else if (slot < 0 && !eg_.eclass(goal.cls).tuple &&
                 (!weight_var_[pn.id] || eg_.eclass(goal.cls).constant) &&
                 (!pattern_.rule().exact_variable_types ||
                  eg_.eclass(goal.cls).types[0].dims == pn.output_types[0].dims)) {
        slot = goal.cls;
        Solve(goals);
        slot = -1;
      }
    } else if (pattern_.yields_tuple(pn.id)) {
      // The class must hold get-item(index) of a tuple class the operator matches.
      const int item_op = pattern_.item_op(goal.ref.index);
      for (ENodeId id : eg_.eclass(goal.cls).nodes) {
        const ENode& n = eg_.node(id);
        if (n.op == item_op) MatchOperator(pn, eg_.Find(n.children[0]), goals);
      }
    } else if (goal.ref.index == 0) {
      MatchOperator(pn, goal.cls, goals);
    }
    goals.push_back(goal);
  }

  void MatchOperator(const Node& pn, EClassId cls, std::vector<Goal>& goals) {
    EClassId& slot = assign_[pn.id];
    if (slot >= 0) {
      if (slot == cls) Solve(goals);
      return;
    }
    const int op = pattern_.op_of(pn.id);
    const bool commutes = OperandsCommute(pn);
    for (ENodeId id : eg_.eclass(cls).nodes) {
      const ENode& n = eg_.node(id);
      if (n.op != op || n.children.size() != pn.inputs.size()) continue;
      // Equal operands read the same either way.
      const int orders = commutes && eg_.Find(n.children[0]) != eg_.Find(n.children[1]) ? 2 : 1;
      for (int order = 0; order < orders; ++order) {
        const bool swap = order == 1;
        if (!KeepsProofHere(pn, n, swap)) continue;
        slot = cls;
        swaps_ += swap ? 1 : 0;
        const size_t depth = goals.size();
        const size_t last = pn.inputs.size() - 1;
        for (size_t i = 0; i < pn.inputs.size(); ++i) {
          goals.push_back({pn.inputs[i], eg_.Find(n.children[swap ? last - i : i])});
        }
        Solve(goals);
        goals.resize(depth);
        swaps_ -= swap ? 1 : 0;
        slot = -1;
        if (Full()) return;
      }
    }
  }

  // Whether e-node `n`, matched by pattern operator `pn` (its children read
  // in reverse when `swap`), keeps the signature the rule's proof assumed on
  // its children's types.
  bool KeepsProofHere(const Node& pn, const ENode& n, bool swap) const {
    const GraphConditions& conditions = pattern_.rule().lhs_conditions();
    if (conditions.empty()) return true;
    std::vector<TensorType> types;
    for (EClassId child : n.children) {
      const EClass& c = eg_.eclass(eg_.Find(child));
      if (c.tuple || c.types.size() != 1) return false;
      types.push_back(c.types[0]);
    }
    if (swap) std::reverse(types.begin(), types.end());
    return KeepsProof(conditions, pn.id, pn.kind, pn.params, types, static_cast<int>(pn.output_types.size()));
  }

  const CompiledPattern& pattern_;
  const Graph& p_;
  const EGraph& eg_;
  std::vector<EClassId> assign_;
  std::vector<bool> weight_var_;
  std::vector<std::vector<EClassId>>* out_ = nullptr;
  std::vector<bool>* swapped_out_ = nullptr;
  int swaps_ = 0;  // operands read in reverse on the current path
  int limit_ = 0;
};

bool Compatible(const Assignment& a, const std::vector<EClassId>& b) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (a.classes[i] >= 0 && b[i] >= 0 && a.classes[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

EMatchIndex::EMatchIndex(const EGraph& egraph) : egraph_(egraph) {
  for (EClassId c : egraph.ClassIds()) {
    for (ENodeId id : egraph.eclass(c).nodes) {
      std::vector<EClassId>& classes = by_op_[egraph.node(id).op];
      if (classes.empty() || classes.back() != c) classes.push_back(c);
    }
  }
}

const std::vector<EClassId>& EMatchIndex::classes_with(int op) const {
  auto it = by_op_.find(op);
  return it == by_op_.end() ? empty_ : it->second;
}

std::vector<int> EMatchIndex::ops() const {
  std::vector<int> ops;
  ops.reserve(by_op_.size());
  for (const auto& [op, classes] : by_op_) ops.push_back(op);
  return ops;
}

PatternIndex::PatternIndex(const std::vector<const CompiledPattern*>& patterns) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i] != nullptr && patterns[i]->root_op() >= 0) {
      by_root_op_[patterns[i]->root_op()].push_back(static_cast<int>(i));
    }
  }
}

std::vector<int> PatternIndex::Candidates(const EMatchIndex& index) const {
  std::vector<int> out;
  for (int op : index.ops()) {
    auto it = by_root_op_.find(op);
    if (it != by_root_op_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

CompiledPattern::CompiledPattern(const RewriteRule& rule, EGraph& egraph) : rule_(&rule) {
  const Graph& p = rule.lhs();
  ops_.assign(p.num_nodes(), -1);
  tuple_.assign(p.num_nodes(), false);
  size_t max_outputs = 1;
  for (const Node& n : p.nodes()) {
    max_outputs = std::max(max_outputs, n.output_types.size());
    if (IsInputOrWeight(n.kind)) continue;
    EOp op;
    op.role = n.kind == OpKind::kOpaque ? EOp::Role::kOpaque : EOp::Role::kOperator;
    op.kind = n.kind;
    op.params = n.params;
    // Opaque operators are never rewritten: a pattern holding one matches nothing.
    op.source_node = -2;
    ops_[n.id] = egraph.InternOp(op);
    tuple_[n.id] = egraph.YieldsTuple(ops_[n.id]);
  }
  for (const GraphOutput& o : p.outputs()) {
    if (ops_[o.tensor.node] >= 0) {
      root_op_ = ops_[o.tensor.node];
      break;
    }
  }
  for (size_t i = 0; i < max_outputs; ++i) {
    EOp item;
    item.role = EOp::Role::kGetItem;
    item.item = static_cast<int>(i);
    item_ops_.push_back(egraph.InternOp(item));
  }
}

std::vector<EMatch> FindEMatches(const CompiledPattern& pattern, const EMatchIndex& index, int limit,
                                 bool* truncated) {
  const Graph& p = pattern.rule().lhs();
  const int num_outputs = static_cast<int>(p.outputs().size());
  if (truncated != nullptr) *truncated = false;
  auto cut = [&] {
    if (truncated != nullptr) *truncated = true;
  };
  std::vector<Assignment> partial = {{std::vector<EClassId>(p.num_nodes(), -1), std::vector<EClassId>(num_outputs, -1)}};
  Enumerator enumerator(pattern, index);
  const bool symmetric = pattern.rule().symmetric_outputs;
  // Operator outputs one at a time, each joined with what the earlier ones matched.
  for (int o = 0; o < num_outputs; ++o) {
    const TensorRef ref = p.outputs()[o].tensor;
    const Node& producer = p.node(ref.node);
    if (IsInputOrWeight(producer.kind)) continue;
    const int root_op = pattern.yields_tuple(producer.id) ? pattern.item_op(ref.index) : pattern.op_of(producer.id);
    std::vector<std::vector<EClassId>> found;
    std::vector<bool> found_swapped;
    std::vector<EClassId> found_root;
    for (EClassId root : index.classes_with(root_op)) {
      enumerator.Run(ref, root, limit, &found, &found_swapped);
      found_root.resize(found.size(), root);
      if (static_cast<int>(found.size()) >= limit) {
        cut();
        break;
      }
    }
    std::vector<Assignment> joined;
    for (const Assignment& a : partial) {
      for (size_t k = 0; k < found.size(); ++k) {
        if (!Compatible(a, found[k])) continue;
        if (std::find(a.roots.begin(), a.roots.end(), found_root[k]) != a.roots.end()) continue;
        if (symmetric && o > 0 && a.roots[o - 1] >= 0 && found_root[k] < a.roots[o - 1]) continue;
        Assignment merged = a;
        for (size_t i = 0; i < found[k].size(); ++i) {
          if (merged.classes[i] < 0) merged.classes[i] = found[k][i];
        }
        merged.roots[o] = found_root[k];
        merged.swapped = merged.swapped || found_swapped[k];
        joined.push_back(std::move(merged));
        if (static_cast<int>(joined.size()) >= limit) break;
      }
      if (static_cast<int>(joined.size()) >= limit) {
        cut();
        break;
      }
    }
    partial = std::move(joined);
    if (partial.empty()) return {};
  }
  std::vector<EMatch> matches;
  std::set<std::pair<std::vector<EClassId>, std::map<std::string, EClassId>>> seen;
  // A match that read commuting operands in reverse and covers the classes
  // another covers, binding the same ones (a symmetric pattern, such as
  // cat(a,b) + cat(c,d), matched the other way round), adds nothing: left out.
  std::set<std::pair<std::vector<EClassId>, std::vector<EClassId>>> covered;
  const bool any_swapped = std::any_of(partial.begin(), partial.end(), [](const Assignment& a) { return a.swapped; });
  if (any_swapped) {
    std::stable_partition(partial.begin(), partial.end(), [](const Assignment& a) { return !a.swapped; });
  }
  for (Assignment& a : partial) {
    EMatch m;
    bool complete = true;
    for (int o = 0; o < num_outputs; ++o) {
      const TensorRef ref = p.outputs()[o].tensor;
      if (a.roots[o] < 0) a.roots[o] = a.classes[ref.node];  // a bare-variable output
      if (a.roots[o] < 0) complete = false;
    }
    for (const Node& n : p.nodes()) {
      if (!IsInputOrWeight(n.kind)) continue;
      if (a.classes[n.id] < 0) {
        complete = false;  // a variable no operator reads
        break;
      }
      m.binding[n.name] = a.classes[n.id];
    }
    if (!complete) continue;
    std::set<EClassId> distinct(a.roots.begin(), a.roots.end());
    if (static_cast<int>(distinct.size()) != num_outputs) continue;
    m.outputs = a.roots;
    if (!seen.insert({m.outputs, m.binding}).second) continue;
    if (any_swapped) {
      std::vector<EClassId> cover = a.classes, bound;
      for (const auto& [name, c] : m.binding) bound.push_back(c);
      std::sort(cover.begin(), cover.end());
      std::sort(bound.begin(), bound.end());
      if (!covered.insert({std::move(cover), std::move(bound)}).second && a.swapped) continue;
    }
    m.classes = a.classes;
    matches.push_back(std::move(m));
  }
  return matches;
}

std::optional<FactBinding> MatchedFacts(const RewriteRule& rule, const EGraph& egraph, const EMatch& match) {
  FactBinding facts;
  if (rule.lhs_conditions().empty()) return facts;
  const Graph& p = rule.lhs();
  if (match.classes.size() != static_cast<size_t>(p.num_nodes())) return std::nullopt;
  for (const Node& n : p.nodes()) {
    if (IsInputOrWeight(n.kind)) continue;
    std::vector<TensorType> types;
    for (const TensorRef& in : n.inputs) {
      if (match.classes[in.node] < 0) return std::nullopt;
      const EClass& c = egraph.eclass(match.classes[in.node]);
      if (in.index < 0 || in.index >= static_cast<int>(c.types.size())) return std::nullopt;
      types.push_back(c.types[in.index]);
    }
    if (!KeepsProof(rule.lhs_conditions(), n.id, n.kind, n.params, types, static_cast<int>(n.output_types.size()),
                    &facts)) {
      return std::nullopt;
    }
  }
  return facts;
}

}  // namespace taso::optimizer
