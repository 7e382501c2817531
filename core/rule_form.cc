#include "core/rule_form.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"
#include "core/side_conditions.h"

namespace taso {
namespace {

std::string TypeGroup(const TensorType& t) { return absl::StrCat("[", absl::StrJoin(t.dims, ","), "]"); }

// The name a form gives node `id` when it is a variable there (substituted,
// an input or a weight); null when it is an operator to write out.
const std::string* FormVariable(const Graph& g, const FormSubstitution& subst, int id) {
  auto sub = subst.find(id);
  if (sub != subst.end()) return &sub->second;
  const Node& node = g.node(id);
  return node.kind == OpKind::kInput || node.kind == OpKind::kWeight ? &node.name : nullptr;
}

// Writes one side: in skeleton mode (`rename` null) variables are "$" and
// recorded in `form`; otherwise they are their (renamed) name.
class Serializer {
 public:
  Serializer(const Graph& g, const FormSubstitution& subst, const VariableRenaming* rename, Form* form,
             std::vector<int>* emitted)
      : g_(g), subst_(subst), rename_(rename), form_(form), emitted_order_(emitted) {}

  std::string Visit(TensorRef t, std::string& out) {
    const Node& node = g_.node(t.node);
    if (const std::string* variable = FormVariable(g_, subst_, t.node)) {
      const std::string& name = *variable;
      if (rename_ == nullptr) {
        form_->occurrences.push_back(name);
        form_->groups[name] = TypeGroup(g_.type(t));
        return "$";
      }
      auto r = rename_->find(name);
      return absl::StrCat("$", r == rename_->end() ? name : r->second);
    }
    auto done = emitted_.find(t.node);
    if (done == emitted_.end()) {
      std::vector<std::string> args;
      for (const TensorRef& in : node.inputs) args.push_back(Visit(in, out));
      const int index = next_++;
      absl::StrAppend(&out, "%", index, "=", Label(node), "(", absl::StrJoin(args, ","), ");");
      done = emitted_.emplace(t.node, index).first;
      if (emitted_order_ != nullptr) emitted_order_->push_back(t.node);
    }
    return node.output_types.size() > 1 ? absl::StrCat("%", done->second, ":", t.index)
                                        : absl::StrCat("%", done->second);
  }

 private:
  // What Z3 would see: the operator's signature, which carries the shape
  // facts its laws depend on; so equal structure means equal proof.
  std::string Label(const Node& node) const {
    auto sigs = NodeSignaturesIn(g_, node);
    if (!sigs.ok() || sigs->empty()) return OpLabel(node.kind, node.params);
    // Layout is not a value (Z3 ignores it) but layout rules are rules: a
    // transpose keeps whether it only permutes strides.
    const std::string layout = node.kind == OpKind::kTranspose && !node.params.shuffle ? ",view" : "";
    // A split's outputs differ only in the index; an n-ary concat's nestings
    // are all part of its meaning.
    if (node.kind == OpKind::kSplit) sigs->resize(1);
    std::vector<std::string> parts;
    for (const ProofSignature& sig : *sigs) {
      const std::string name = node.kind == OpKind::kSplit ? "split" : sig.name;
      parts.push_back(absl::StrCat(name, "[", absl::StrJoin(sig.params, ","), layout, "]"));
    }
    return absl::StrJoin(parts, "+");
  }

  const Graph& g_;
  const FormSubstitution& subst_;
  const VariableRenaming* rename_;
  Form* form_;
  std::vector<int>* emitted_order_;
  std::map<int, int> emitted_;
  int next_ = 0;
};

std::string Write(const Graph& g, const std::vector<TensorRef>& roots, const FormSubstitution& subst,
                  const VariableRenaming* rename, Form* form, std::vector<int>* emitted) {
  std::string out;
  Serializer s(g, subst, rename, form, emitted);
  for (const TensorRef& r : roots) {
    const std::string ref = s.Visit(r, out);
    absl::StrAppend(&out, "out ", ref, ";");
  }
  return out;
}

}  // namespace

std::string SideText(const Graph& g, const std::vector<TensorRef>& roots, const FormSubstitution& subst,
                     const VariableRenaming& rename) {
  return Write(g, roots, subst, &rename, nullptr, nullptr);
}

namespace {

// The form's pattern from its occurrences: each one's variable by the index
// of that variable's first occurrence.
void SetPattern(Form& form) {
  std::map<std::string, int> first;
  for (const std::string& v : form.occurrences) {
    form.pattern.push_back(first.emplace(v, static_cast<int>(first.size())).first->second);
  }
}

}  // namespace

Form MakeForm(const PairView& p) {
  Form form;
  form.skeleton = Write(*p.a, p.ra, p.sa, nullptr, &form, &form.emitted_a);
  form.skeleton += "=>";
  form.skeleton += Write(*p.b, p.rb, p.sb, nullptr, &form, &form.emitted_b);
  SetPattern(form);
  return form;
}

namespace {

// One side's part of VariableGroups: the walk Serializer makes, each
// operator expanded once, without writing anything.
void CollectVariableGroups(const Graph& g, const std::vector<TensorRef>& roots, const FormSubstitution& subst,
                           std::map<std::string, std::string>& groups) {
  std::vector<TensorRef> stack(roots.rbegin(), roots.rend());
  std::vector<bool> expanded(static_cast<size_t>(g.num_nodes()), false);
  while (!stack.empty()) {
    const TensorRef t = stack.back();
    stack.pop_back();
    if (const std::string* variable = FormVariable(g, subst, t.node)) {
      groups[*variable] = TypeGroup(g.type(t));
      continue;
    }
    if (expanded[t.node]) continue;
    expanded[t.node] = true;
    const Node& node = g.node(t.node);
    for (auto in = node.inputs.rbegin(); in != node.inputs.rend(); ++in) stack.push_back(*in);
  }
}

}  // namespace

std::map<std::string, std::string> VariableGroups(const PairView& p) {
  std::map<std::string, std::string> groups;
  CollectVariableGroups(*p.a, p.ra, p.sa, groups);
  CollectVariableGroups(*p.b, p.rb, p.sb, groups);
  return groups;
}

std::string FormKey(const Form& form) { return absl::StrCat(form.skeleton, "|", absl::StrJoin(form.pattern, ",")); }

std::optional<DecodedRule> DecodedFromGraphs(Graph source, Graph target,
                                             const std::vector<std::pair<int, int>>& outputs) {
  DecodedRule d{std::move(source), std::move(target), {}, {}, 0};
  for (const auto& [s, t] : outputs) {
    if (s < 0 || s >= static_cast<int>(d.source.outputs().size()) || t < 0 ||
        t >= static_cast<int>(d.target.outputs().size())) {
      return std::nullopt;
    }
    d.source_roots.push_back(d.source.outputs()[s].tensor);
    d.target_roots.push_back(d.target.outputs()[t].tensor);
  }
  if (d.source_roots.empty()) return std::nullopt;
  d.size = std::max(d.source.num_ops(), d.target.num_ops());
  return d;
}

std::optional<DecodedRule> DecodeRule(const rules::Rule& rule) {
  auto s = GraphFromProto(rule.source());
  auto t = GraphFromProto(rule.target());
  if (!s.ok() || !t.ok()) return std::nullopt;
  std::vector<std::pair<int, int>> outputs;
  for (const rules::OutputPair& p : rule.outputs()) outputs.emplace_back(p.source_output(), p.target_output());
  return DecodedFromGraphs(std::move(*s), std::move(*t), outputs);
}

std::pair<std::string, std::string> RenamingKeyAndReversed(const PairView& p) {
  // A form read right to left is the same two sides in the other order, so
  // each side is written once (writing was most of the store's class checks).
  Form a, b;  // each side's variable occurrences
  const std::string side_a = Write(*p.a, p.ra, p.sa, nullptr, &a, nullptr);
  const std::string side_b = Write(*p.b, p.rb, p.sb, nullptr, &b, nullptr);
  auto key = [](const std::string& left, const Form& l, const std::string& right, const Form& r) {
    Form form;  // as MakeForm would make it
    form.skeleton = absl::StrCat(left, "=>", right);
    form.occurrences = l.occurrences;
    form.occurrences.insert(form.occurrences.end(), r.occurrences.begin(), r.occurrences.end());
    SetPattern(form);
    return FormKey(form);
  };
  std::string forward = key(side_a, a, side_b, b);
  std::string backward = key(side_b, b, side_a, a);
  if (backward < forward) std::swap(forward, backward);
  return {std::move(forward), std::move(backward)};
}

std::string RenamingKey(const PairView& p) { return RenamingKeyAndReversed(p).first; }

namespace {

bool OnVariablesOnly(const Graph& g, const Node& node) {
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [&](TensorRef r) { return IsInputOrWeight(g.node(r.node).kind); });
}

bool SameOperatorOnSameVariables(const Graph& ga, const Node& a, const Graph& gb, const Node& b) {
  if (a.kind != b.kind || !ParamsEqual(a.kind, a.params, b.params) || a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (ga.node(a.inputs[i].node).name != gb.node(b.inputs[i].node).name) return false;
  }
  return true;
}

}  // namespace

std::vector<PairView> CommonSubgraphReductions(const PairView& p) {
  std::vector<PairView> out;
  for (const Node& a : p.a->nodes()) {
    if (IsInputOrWeight(a.kind) || a.inputs.empty() || a.output_types.size() != 1 || !OnVariablesOnly(*p.a, a)) {
      continue;
    }
    for (const Node& b : p.b->nodes()) {
      if (b.output_types.size() != 1 || !SameOperatorOnSameVariables(*p.a, a, *p.b, b)) continue;
      out.push_back(
          PairView{p.a, p.ra, {{a.id, kCommonSubgraphVariable}}, p.b, p.rb, {{b.id, kCommonSubgraphVariable}}});
    }
  }
  return out;
}

std::optional<PairView> DropIdenticalOutputs(const PairView& p) {
  static const VariableRenaming identity;
  PairView out{p.a, {}, p.sa, p.b, {}, p.sb};
  for (size_t i = 0; i < p.ra.size(); ++i) {
    if (SideText(*p.a, {p.ra[i]}, p.sa, identity) == SideText(*p.b, {p.rb[i]}, p.sb, identity)) continue;
    out.ra.push_back(p.ra[i]);
    out.rb.push_back(p.rb[i]);
  }
  if (out.ra.size() == p.ra.size() || out.ra.empty()) return std::nullopt;
  return out;
}

std::vector<PairView> SmallerRuleReductions(const PairView& p) {
  std::vector<PairView> out;
  if (auto r = DropIdenticalOutputs(p)) out.push_back(*std::move(r));
  for (PairView& r : CommonSubgraphReductions(p)) {
    auto smaller = DropIdenticalOutputs(r);
    out.push_back(std::move(r));
    if (smaller) out.push_back(*std::move(smaller));
  }
  return out;
}

std::optional<PairView> CommonSupergraphReduction(const PairView& p) {
  if (p.ra.size() != 1 || p.rb.size() != 1) return std::nullopt;
  const Node& a = p.a->node(p.ra[0].node);
  const Node& b = p.b->node(p.rb[0].node);
  if (a.kind != b.kind || !ParamsEqual(a.kind, a.params, b.params) || a.inputs.size() != b.inputs.size() ||
      a.output_types.size() != 1 || a.inputs.empty()) {
    return std::nullopt;
  }
  int differing = -1;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const Node& x = p.a->node(a.inputs[i].node);
    const Node& y = p.b->node(b.inputs[i].node);
    const bool same = IsInputOrWeight(x.kind) && IsInputOrWeight(y.kind) && x.name == y.name;
    if (same) continue;
    if (differing >= 0) return std::nullopt;
    differing = static_cast<int>(i);
  }
  if (differing < 0) return std::nullopt;
  return PairView{p.a, {a.inputs[differing]}, {}, p.b, {b.inputs[differing]}, {}};
}

std::vector<PairView> SmallerRulesImplying(const PairView& p) {
  std::vector<PairView> out = SmallerRuleReductions(p);
  if (auto r = CommonSupergraphReduction(p)) out.push_back(*std::move(r));
  return out;
}

std::string PackPattern(const std::vector<int>& pattern) {
  std::string out;
  out.reserve(pattern.size());
  for (int v : pattern) out.push_back(static_cast<char>(std::min(v, 255)));
  return out;
}

bool IsInstanceOf(const Form& specific, const Form& general) {
  // Shapes are not compared: as with a renaming, the operators' signatures in
  // the skeleton carry every shape fact the proof used.
  return specific.skeleton == general.skeleton && PatternIsInstanceOf(specific.pattern, general.pattern);
}

bool SplitFormKey(const std::string& key, std::string* skeleton, std::vector<int>* pattern) {
  const size_t bar = key.rfind('|');
  if (bar == std::string::npos) return false;
  skeleton->assign(key, 0, bar);
  pattern->clear();
  int value = -1;
  for (size_t i = bar + 1; i <= key.size(); ++i) {
    if (i == key.size() || key[i] == ',') {
      if (value < 0) return i == key.size() && i == bar + 1;  // "" is an empty pattern
      pattern->push_back(value);
      value = -1;
    } else if (key[i] >= '0' && key[i] <= '9') {
      value = (value < 0 ? 0 : value * 10) + (key[i] - '0');
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace taso
