#include "optimizer/eqsat/derive.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/rewrite/reachable_rules.h"

namespace taso::optimizer {
namespace {

// Copies `side` into `into`, its variables shared by name with what is
// already there (all of them weights with `as_weights`); returns the copies
// of its outputs.
absl::StatusOr<std::vector<TensorRef>> AppendSide(const Graph& side, Graph& into,
                                                  std::map<std::string, TensorRef>& variables, bool as_weights) {
  auto order = side.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<std::vector<TensorRef>> copied(side.num_nodes());
  for (int id : *order) {
    const Node& n = side.node(id);
    if (IsInputOrWeight(n.kind)) {
      auto [it, fresh] = variables.try_emplace(n.name);
      if (fresh) {
        it->second = n.kind == OpKind::kWeight || as_weights ? into.AddWeight(n.name, n.output_types[0])
                                                             : into.AddInput(n.name, n.output_types[0]);
      }
      copied[id] = {it->second};
      continue;
    }
    std::vector<TensorRef> inputs;
    for (const TensorRef& in : n.inputs) inputs.push_back(copied[in.node][in.index]);
    auto outs = into.AddOp(n.kind, n.params, inputs);
    if (!outs.ok()) return outs.status();
    copied[id] = *std::move(outs);
  }
  std::vector<TensorRef> outputs;
  for (const GraphOutput& o : side.outputs()) outputs.push_back(copied[o.tensor.node][o.tensor.index]);
  return outputs;
}

// The sides in one graph, their outputs in order, variables shared.
absl::StatusOr<Graph> Joined(const std::vector<const Graph*>& sides, bool as_weights) {
  Graph joined;
  std::map<std::string, TensorRef> variables;
  for (const Graph* side : sides) {
    auto outs = AppendSide(*side, joined, variables, as_weights);
    if (!outs.ok()) return outs.status();
    for (const TensorRef& t : *outs) joined.AddOutput(absl::StrCat("out", joined.outputs().size()), t);
  }
  return joined;
}

}  // namespace

std::string DeriveOutcomeName(DeriveOutcome outcome) {
  switch (outcome) {
    case DeriveOutcome::kDerived: return "derived";
    case DeriveOutcome::kSaturated: return "saturated";
    case DeriveOutcome::kLimit: return "limit";
  }
  return "limit";
}

absl::StatusOr<Derivation> DeriveRule(const rules::Rule& rule, const std::vector<RewriteRule>& rewrites,
                                      const DeriveOptions& options) {
  const absl::Time start = absl::Now();
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return absl::InvalidArgumentError(absl::StrCat("source: ", source.status().message()));
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return absl::InvalidArgumentError(absl::StrCat("target: ", target.status().message()));
  std::vector<std::pair<int, int>> pairs;
  for (const rules::OutputPair& p : rule.outputs()) pairs.emplace_back(p.source_output(), p.target_output());
  if (pairs.empty()) {
    for (size_t i = 0; i < source->outputs().size() && i < target->outputs().size(); ++i) pairs.emplace_back(i, i);
  }
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= static_cast<int>(source->outputs().size()) || t < 0 ||
        t >= static_cast<int>(target->outputs().size())) {
      return absl::InvalidArgumentError("an output pair is out of range");
    }
  }
  if (pairs.empty()) return absl::InvalidArgumentError("the rule has no outputs");

  // Met: both sides are in the e-graph and each output pair shares a class.
  auto met = [&](const EGraph& egraph) {
    auto s = LookupGraph(egraph, *source);
    if (!s) return false;
    auto t = LookupGraph(egraph, *target);
    if (!t) return false;
    for (const auto& [a, b] : pairs) {
      if ((*s)[a] != (*t)[b]) return false;
    }
    return true;
  };

  std::vector<const Graph*> sides = {&*source, &*target};
  if (options.mode == DeriveMode::kLhs) {
    sides.resize(1);
    if (source->num_ops() == 0) sides[0] = &*target;
  }
  auto start_from = Joined(sides, !options.kinds_as_declared);
  if (!start_from.ok()) return absl::InvalidArgumentError(absl::StrCat("the e-graph: ", start_from.status().message()));
  EqsatOptions eqsat;
  eqsat.iteration_limit = options.iteration_limit;
  eqsat.node_limit = options.node_limit;
  eqsat.time_limit = options.time_limit;
  eqsat.goal = met;
  // Only the rewrites that could ever match from here (reachable_rules.h):
  // the others change nothing, and a size-4 set has 185,000 of them to set
  // up for every rule derived.
  std::vector<const RewriteRule*> given;
  given.reserve(rewrites.size());
  for (const RewriteRule& r : rewrites) given.push_back(&r);
  std::vector<RewriteRule> reachable;
  for (int i : ReachableRewrites(*start_from, given)) reachable.push_back(rewrites[i]);
  auto sat = Saturate(*start_from, reachable, eqsat);
  if (!sat.ok()) return sat.status();
  Derivation d;
  d.stop = sat->stop_reason;
  d.stop_detail = sat->stop_detail;
  d.iterations = sat->iterations;
  d.enodes = sat->egraph.num_enodes();
  // The last round may have met the goal and a limit at once.
  d.outcome = met(sat->egraph)                           ? DeriveOutcome::kDerived
              : sat->stop_reason == SearchStop::kSaturated ? DeriveOutcome::kSaturated
                                                           : DeriveOutcome::kLimit;
  d.time = absl::Now() - start;
  return d;
}

}  // namespace taso::optimizer
