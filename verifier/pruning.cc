#include "verifier/pruning.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"

namespace taso::verifier {
namespace {

std::string TypeGroup(const TensorType& t) { return absl::StrCat("[", absl::StrJoin(t.dims, ","), "]"); }

// A pair of graphs read as one structure: the skeleton names operators and
// edges and writes each variable occurrence as its type group; `occurrences`
// lists the variables in the order the skeleton meets them.
struct Form {
  std::string skeleton;
  std::vector<std::string> occurrences;
  std::vector<int> pattern;  // occurrence -> index of its variable's first occurrence
};

// Nodes of one side replaced by a variable (the common-subgraph reduction).
using Substitution = std::map<int, std::string>;  // node id -> variable name

class Serializer {
 public:
  Serializer(const Graph& g, const Substitution& subst) : g_(g), subst_(subst) {}

  // Serializes the computation of `t`; returns the reference text.
  std::string Visit(TensorRef t, Form& form) {
    const Node& node = g_.node(t.node);
    auto sub = subst_.find(t.node);
    if (sub != subst_.end() || node.kind == OpKind::kInput || node.kind == OpKind::kWeight) {
      form.occurrences.push_back(sub != subst_.end() ? sub->second : node.name);
      return absl::StrCat("$", TypeGroup(g_.type(t)));
    }
    auto done = emitted_.find(t.node);
    if (done == emitted_.end()) {
      std::vector<std::string> args;
      for (const TensorRef& in : node.inputs) args.push_back(Visit(in, form));
      const int index = next_++;
      absl::StrAppend(&form.skeleton, "%", index, "=", OpLabel(node.kind, node.params), "(",
                      absl::StrJoin(args, ","), ");");
      done = emitted_.emplace(t.node, index).first;
    }
    return node.output_types.size() > 1 ? absl::StrCat("%", done->second, ":", t.index)
                                        : absl::StrCat("%", done->second);
  }

 private:
  const Graph& g_;
  const Substitution& subst_;
  std::map<int, int> emitted_;
  int next_ = 0;
};

// The form of (roots of a) = (roots of b), left to right.
Form MakeForm(const Graph& a, const std::vector<TensorRef>& a_roots, const Substitution& a_subst, const Graph& b,
              const std::vector<TensorRef>& b_roots, const Substitution& b_subst) {
  Form form;
  Serializer sa(a, a_subst), sb(b, b_subst);
  for (const TensorRef& r : a_roots) absl::StrAppend(&form.skeleton, "out ", sa.Visit(r, form), ";");
  form.skeleton += "=>";
  for (const TensorRef& r : b_roots) absl::StrAppend(&form.skeleton, "out ", sb.Visit(r, form), ";");
  std::map<std::string, int> first;
  for (size_t i = 0; i < form.occurrences.size(); ++i) {
    form.pattern.push_back(first.emplace(form.occurrences[i], static_cast<int>(first.size())).first->second);
  }
  return form;
}

std::string KeyOf(const Form& f) { return absl::StrCat(f.skeleton, "|", absl::StrJoin(f.pattern, ",")); }

// Whether `specific`'s variable pattern is an instance of `general`'s: every
// two occurrences that share a variable in `general` share one in `specific`.
bool IsInstance(const std::vector<int>& general, const std::vector<int>& specific) {
  if (general.size() != specific.size()) return false;
  std::map<int, int> mapping;
  for (size_t i = 0; i < general.size(); ++i) {
    auto [it, inserted] = mapping.emplace(general[i], specific[i]);
    if (!inserted && it->second != specific[i]) return false;
  }
  return true;
}

struct Decoded {
  Graph source, target;
  std::vector<TensorRef> source_roots, target_roots;  // in output-pair order
  int size = 0;
};

std::optional<Decoded> Decode(const rules::Rule& rule) {
  auto s = GraphFromProto(rule.source());
  auto t = GraphFromProto(rule.target());
  if (!s.ok() || !t.ok()) return std::nullopt;
  Decoded d{std::move(*s), std::move(*t), {}, {}, 0};
  for (const rules::OutputPair& p : rule.outputs()) {
    if (p.source_output() < 0 || p.source_output() >= static_cast<int>(d.source.outputs().size()) ||
        p.target_output() < 0 || p.target_output() >= static_cast<int>(d.target.outputs().size())) {
      return std::nullopt;
    }
    d.source_roots.push_back(d.source.outputs()[p.source_output()].tensor);
    d.target_roots.push_back(d.target.outputs()[p.target_output()].tensor);
  }
  d.size = std::max(d.source.num_ops(), d.target.num_ops());
  return d;
}

// Proved rules seen so far, by skeleton, for renaming and instance lookups.
class Index {
 public:
  // The id of a registered rule that `form` is a renaming or instance of.
  std::optional<std::pair<std::string, bool>> FindGeneral(const Form& form) const {
    auto it = by_skeleton_.find(form.skeleton);
    if (it == by_skeleton_.end()) return std::nullopt;
    for (const auto& [pattern, id] : it->second) {
      if (IsInstance(pattern, form.pattern)) return std::make_pair(id, pattern == form.pattern);
    }
    return std::nullopt;
  }
  void Add(const Form& form, const std::string& id) { by_skeleton_[form.skeleton].emplace_back(form.pattern, id); }

 private:
  std::map<std::string, std::vector<std::pair<std::vector<int>, std::string>>> by_skeleton_;
};

std::optional<std::pair<std::string, bool>> FindEitherWay(const Index& index, const Form& forward,
                                                          const Form& backward) {
  if (auto f = index.FindGeneral(forward)) return f;
  return index.FindGeneral(backward);
}

struct Reduced {
  Form forward, backward;
};

bool AllVariables(const Graph& g, const Node& n) {
  return std::all_of(n.inputs.begin(), n.inputs.end(), [&](const TensorRef& r) {
    const OpKind k = g.node(r.node).kind;
    return k == OpKind::kInput || k == OpKind::kWeight;
  });
}

bool SameOperator(const Graph& ga, const Node& a, const Graph& gb, const Node& b) {
  if (a.kind != b.kind || !ParamsEqual(a.kind, a.params, b.params) || a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (ga.node(a.inputs[i].node).name != gb.node(b.inputs[i].node).name) return false;
  }
  return true;
}

// Common subgraph: an operator on variables both sides compute, made a
// fresh variable.
std::vector<Reduced> CommonSubgraphReductions(const Decoded& d) {
  std::vector<Reduced> out;
  for (const Node& a : d.source.nodes()) {
    if (a.kind == OpKind::kInput || a.kind == OpKind::kWeight || a.inputs.empty()) continue;
    if (a.output_types.size() != 1 || !AllVariables(d.source, a)) continue;
    for (const Node& b : d.target.nodes()) {
      if (b.output_types.size() != 1 || !AllVariables(d.target, b) || !SameOperator(d.source, a, d.target, b)) continue;
      const Substitution sa{{a.id, "$common"}}, sb{{b.id, "$common"}};
      out.push_back({MakeForm(d.source, d.source_roots, sa, d.target, d.target_roots, sb),
                     MakeForm(d.target, d.target_roots, sb, d.source, d.source_roots, sa)});
    }
  }
  return out;
}

// Common supergraph: single outputs ending in the same operator whose
// operands agree but for one; the differing operands must be equal.
std::optional<Reduced> CommonSupergraphReduction(const Decoded& d) {
  if (d.source_roots.size() != 1) return std::nullopt;
  const Node& a = d.source.node(d.source_roots[0].node);
  const Node& b = d.target.node(d.target_roots[0].node);
  if (a.kind != b.kind || !ParamsEqual(a.kind, a.params, b.params) || a.inputs.size() != b.inputs.size() ||
      a.output_types.size() != 1 || a.inputs.empty()) {
    return std::nullopt;
  }
  auto is_variable = [](const Graph& g, TensorRef r) {
    return g.node(r.node).kind == OpKind::kInput || g.node(r.node).kind == OpKind::kWeight;
  };
  int differing = -1;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const bool same = is_variable(d.source, a.inputs[i]) && is_variable(d.target, b.inputs[i]) &&
                      d.source.node(a.inputs[i].node).name == d.target.node(b.inputs[i].node).name;
    if (same) continue;
    if (differing >= 0) return std::nullopt;
    differing = static_cast<int>(i);
  }
  if (differing < 0) return std::nullopt;
  const std::vector<TensorRef> ra{a.inputs[differing]}, rb{b.inputs[differing]};
  return Reduced{MakeForm(d.source, ra, {}, d.target, rb, {}), MakeForm(d.target, rb, {}, d.source, ra, {})};
}

}  // namespace

std::string RuleRenamingKey(const rules::Rule& rule) {
  auto d = Decode(rule);
  if (!d) return "";
  const std::string forward = KeyOf(MakeForm(d->source, d->source_roots, {}, d->target, d->target_roots, {}));
  const std::string backward = KeyOf(MakeForm(d->target, d->target_roots, {}, d->source, d->source_roots, {}));
  return std::min(forward, backward);
}

ReductionTable PruneRules(std::vector<rules::Rule>& rules) {
  ReductionTable table;
  struct Item {
    size_t index;
    Decoded decoded;
    Form forward, backward;
    int distinct_variables;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].status() != rules::RULE_STATUS_PROVED) continue;
    ++table.proved;
    auto d = Decode(rules[i]);
    if (!d) continue;
    Form f = MakeForm(d->source, d->source_roots, {}, d->target, d->target_roots, {});
    Form b = MakeForm(d->target, d->target_roots, {}, d->source, d->source_roots, {});
    const int distinct = f.pattern.empty() ? 0 : *std::max_element(f.pattern.begin(), f.pattern.end()) + 1;
    items.push_back({i, std::move(*d), std::move(f), std::move(b), distinct});
  }
  // Smaller rules first; among equal sizes, more general (more distinct
  // variables) first, so an instance always finds its general rule kept.
  std::stable_sort(items.begin(), items.end(), [](const Item& x, const Item& y) {
    if (x.decoded.size != y.decoded.size) return x.decoded.size < y.decoded.size;
    return x.distinct_variables > y.distinct_variables;
  });
  Index index;
  for (Item& item : items) {
    rules::Rule& rule = rules[item.index];
    auto prune = [&](const std::string& why) {
      rule.set_status(rules::RULE_STATUS_PRUNED);
      rule.set_status_detail(why);
    };
    if (auto general = FindEitherWay(index, item.forward, item.backward)) {
      prune(absl::StrCat(general->second ? "renaming of " : "instance of ", general->first));
      ++table.pruned_renaming;
    } else {
      bool done = false;
      for (const Reduced& r : CommonSubgraphReductions(item.decoded)) {
        if (auto general = FindEitherWay(index, r.forward, r.backward)) {
          prune(absl::StrCat("common subgraph: follows from ", general->first));
          ++table.pruned_subgraph;
          done = true;
          break;
        }
      }
      if (!done) {
        if (auto r = CommonSupergraphReduction(item.decoded)) {
          if (auto general = FindEitherWay(index, r->forward, r->backward)) {
            prune(absl::StrCat("common supergraph: follows from ", general->first));
            ++table.pruned_supergraph;
          }
        }
      }
    }
    index.Add(item.forward, rule.id());
  }
  table.after_renaming = table.proved - table.pruned_renaming;
  table.after_common_subgraph = table.after_renaming - table.pruned_subgraph - table.pruned_supergraph;
  return table;
}

}  // namespace taso::verifier
