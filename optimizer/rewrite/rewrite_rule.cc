#include "optimizer/rewrite/rewrite_rule.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"

namespace taso::optimizer {
namespace {

std::set<std::string> VariableNames(const Graph& g) {
  std::set<std::string> names;
  for (const Node& n : g.nodes()) {
    if (IsInputOrWeight(n.kind)) names.insert(n.name);
  }
  return names;
}

// `side` with its outputs reordered as `order` lists them (the graph itself
// when they are in order already, as single-output rules' are).
absl::StatusOr<Graph> WithOutputs(Graph side, const std::vector<int>& order) {
  bool in_order = order.size() == side.outputs().size();
  for (size_t i = 0; in_order && i < order.size(); ++i) in_order = order[i] == static_cast<int>(i);
  if (in_order) return side;
  std::vector<GraphOutput> outputs;
  for (int i : order) {
    if (i < 0 || i >= static_cast<int>(side.outputs().size())) {
      return absl::InvalidArgumentError("output pair out of range");
    }
    outputs.push_back(side.outputs()[i]);
  }
  return Graph::Create(side.nodes(), outputs);
}

}  // namespace

absl::StatusOr<std::vector<RewriteRule>> RewritesFromRule(const rules::Rule& rule) {
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return absl::InvalidArgumentError(absl::StrCat("rule ", rule.id(), ": ", source.status().message()));
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return absl::InvalidArgumentError(absl::StrCat("rule ", rule.id(), ": ", target.status().message()));
  if (rule.outputs().empty() || rule.outputs_size() != static_cast<int>(source->outputs().size()) ||
      rule.outputs_size() != static_cast<int>(target->outputs().size())) {
    return absl::InvalidArgumentError(absl::StrCat("rule ", rule.id(), ": outputs are not paired one to one"));
  }
  std::vector<int> source_order, target_order;
  for (const auto& pair : rule.outputs()) {
    source_order.push_back(pair.source_output());
    target_order.push_back(pair.target_output());
  }
  auto conditions = RecordedConditions(rule, *source, *target);
  if (!conditions.ok()) {
    // Stale conditions make a rule unusable; edited ones make the set untrusted.
    const absl::StatusCode code = absl::IsInvalidArgument(conditions.status()) ? absl::StatusCode::kInvalidArgument
                                                                              : absl::StatusCode::kFailedPrecondition;
    return absl::Status(code, absl::StrCat("rule ", rule.id(), ": ", conditions.status().message()));
  }
  auto lhs = WithOutputs(*std::move(source), source_order);
  if (!lhs.ok()) return lhs.status();
  auto rhs = WithOutputs(*std::move(target), target_order);
  if (!rhs.ok()) return rhs.status();
  // The replacement may use fewer variables than the pattern binds, never more.
  const std::set<std::string> lhs_vars = VariableNames(*lhs), rhs_vars = VariableNames(*rhs);
  std::vector<std::string> weights;
  for (const auto& v : rule.variables()) {
    if (v.kind() == ir::OP_WEIGHT) weights.push_back(v.name());
  }
  // Node ids of the conditions are the sides' own.
  auto source_side = std::make_shared<const RuleSide>(RuleSide{*std::move(lhs), std::move(conditions->source)});
  auto target_side = std::make_shared<const RuleSide>(RuleSide{*std::move(rhs), std::move(conditions->target)});
  std::vector<RewriteRule> out;
  auto add = [&](const std::shared_ptr<const RuleSide>& pattern, const std::shared_ptr<const RuleSide>& replacement,
                 const std::set<std::string>& pattern_vars, const std::set<std::string>& replacement_vars,
                 const std::string& name) {
    if (pattern->graph.num_ops() == 0) return;  // a bare variable matches everything: not a pattern
    for (const std::string& v : replacement_vars) {
      if (pattern_vars.count(v) == 0) return;  // the replacement would need a tensor the match does not bind
    }
    RewriteRule r;
    r.name = name;
    r.lhs_side = pattern;
    r.rhs_side = replacement;
    for (const std::string& w : weights) {
      if (pattern_vars.count(w)) r.weight_variables.push_back(w);
    }
    r.lhs_ops = pattern->graph.num_ops();
    r.rhs_ops = replacement->graph.num_ops();
    out.push_back(std::move(r));
  };
  add(source_side, target_side, lhs_vars, rhs_vars, rule.id());
  add(target_side, source_side, rhs_vars, lhs_vars, absl::StrCat(rule.id(), "~"));
  return out;
}

absl::StatusOr<RuleSet> RewritesFromCollection(const rules::RuleCollection& rules) {
  RuleSet out;
  for (const rules::Rule& rule : rules.rules()) {
    if (rule.status() != rules::RULE_STATUS_PROVED) continue;
    auto rewrites = RewritesFromRule(rule);
    if (absl::IsFailedPrecondition(rewrites.status())) {
      if (out.unusable++ == 0) out.first_unusable = std::string(rewrites.status().message());
      continue;
    }
    if (!rewrites.ok()) return rewrites.status();
    for (auto& r : *rewrites) out.rewrites.push_back(std::move(r));
  }
  return out;
}

bool KeepsProof(const GraphConditions& conditions, int rule_node, OpKind kind, const OpParams& params,
                const std::vector<TensorType>& inputs, int num_outputs, FactBinding* facts) {
  if (conditions.empty()) return true;
  if (rule_node < 0 || rule_node >= static_cast<int>(conditions.size())) return false;
  return ConditionsHold(conditions[rule_node], kind, params, inputs, num_outputs, facts);
}

RewriteRule RewriteFromSides(std::string name, Graph lhs, Graph rhs, std::vector<std::string> weight_variables,
                             bool exact_variable_types) {
  RewriteRule r;
  r.name = std::move(name);
  r.SetSides(std::move(lhs), std::move(rhs));
  r.weight_variables = std::move(weight_variables);
  r.exact_variable_types = exact_variable_types;
  return r;
}

std::optional<Activation> ActivationOfKind(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu: return Activation::kRelu;
    case OpKind::kSigmoid: return Activation::kSigmoid;
    case OpKind::kTanh: return Activation::kTanh;
    default: return std::nullopt;
  }
}

const RuleSide& RewriteRule::Side(const std::shared_ptr<const RuleSide>& side) {
  static const RuleSide* const kEmpty = new RuleSide();
  return side != nullptr ? *side : *kEmpty;
}

void RewriteRule::SetSides(Graph lhs, Graph rhs, GraphConditions lhs_conditions, GraphConditions rhs_conditions) {
  lhs_ops = lhs.num_ops();
  rhs_ops = rhs.num_ops();
  lhs_side = std::make_shared<const RuleSide>(RuleSide{std::move(lhs), std::move(lhs_conditions)});
  rhs_side = std::make_shared<const RuleSide>(RuleSide{std::move(rhs), std::move(rhs_conditions)});
}

void RewriteRule::SetConditions(GraphConditions lhs_conditions, GraphConditions rhs_conditions) {
  SetSides(lhs(), rhs(), std::move(lhs_conditions), std::move(rhs_conditions));
}

}  // namespace taso::optimizer
