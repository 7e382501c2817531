#include "optimizer/eqsat/eqsat.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/op_registry.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/ematch.h"
#include "optimizer/eqsat/extract.h"

namespace taso::optimizer {
namespace {

// A rule prepared for one e-graph: its pattern, and its right side's
// operations interned, in an order where inputs come first.
struct CompiledRule {
  CompiledRule(const RewriteRule& r, EGraph& egraph) : rule(&r), pattern(r, egraph) {
    rhs_op.assign(r.rhs.num_nodes(), -1);
    rhs_tuple.assign(r.rhs.num_nodes(), false);
    for (const Node& n : r.rhs.nodes()) {
      if (IsInputOrWeight(n.kind)) continue;
      EOp op;
      op.role = EOp::Role::kOperator;
      op.kind = n.kind;
      op.params = n.params;
      rhs_op[n.id] = egraph.InternOp(op);
      rhs_tuple[n.id] = egraph.YieldsTuple(rhs_op[n.id]);
      for (size_t i = item_op.size(); i < n.output_types.size(); ++i) {
        EOp item;
        item.role = EOp::Role::kGetItem;
        item.item = static_cast<int>(i);
        item_op.push_back(egraph.InternOp(item));
      }
    }
    if (auto order = r.rhs.TopologicalOrder(); order.ok()) rhs_order = *order;
    valid = !rhs_order.empty() || r.rhs.num_nodes() == 0;
    for (const Node& n : r.rhs.nodes()) valid = valid && n.kind != OpKind::kOpaque;
  }
  const RewriteRule* rule;
  CompiledPattern pattern;
  std::vector<int> rhs_op;
  std::vector<bool> rhs_tuple;
  std::vector<int> item_op;
  std::vector<int> rhs_order;
  bool valid = true;
};

struct ApplyOutcome {
  bool rejected = false;
  int added = 0;        // new e-nodes
  bool merged = false;  // a union joined two classes
};

// Adds a rule's right side at a match and merges it with the matched classes.
class Applier {
 public:
  explicit Applier(EGraph& egraph) : eg_(egraph) {}

  ApplyOutcome Apply(const CompiledRule& rule, const EMatch& match) {
    const Graph& rhs = rule.rule->rhs;
    // Dry run: what each right-side value would be (an existing class, or new
    // with inferred types), without touching the e-graph.
    struct Value {
      EClassId cls = -1;
      std::vector<TensorType> types;
    };
    std::vector<Value> values(rhs.num_nodes());
    std::vector<std::vector<Value>> items(rhs.num_nodes());
    std::vector<EClassId> read_by_new;  // existing classes new e-nodes would read
    auto value_of = [&](TensorRef t) -> const Value* {
      if (!rule.rhs_tuple[t.node]) return &values[t.node];
      if (t.index < 0 || t.index >= static_cast<int>(items[t.node].size())) return nullptr;
      return &items[t.node][t.index];
    };
    ApplyOutcome rejected{true, 0, false};
    // The replacement is the rule's to build only where every operator keeps
    // the facts its proof assumed, fact variables as the match bound them.
    std::optional<FactBinding> facts = MatchedFacts(*rule.rule, eg_, match);
    if (!facts) return rejected;
    for (int id : rule.rhs_order) {
      const Node& n = rhs.node(id);
      if (IsInputOrWeight(n.kind)) {
        auto it = match.binding.find(n.name);
        if (it == match.binding.end()) return rejected;
        values[id].cls = eg_.Find(it->second);
        values[id].types = eg_.eclass(values[id].cls).types;
        continue;
      }
      ENode enode{rule.rhs_op[id], {}};
      std::vector<TensorType> input_types;
      bool all_exist = true;
      for (const TensorRef& in : n.inputs) {
        const Value* v = value_of(in);
        if (v == nullptr || v->types.size() != 1) return rejected;
        all_exist = all_exist && v->cls >= 0;
        enode.children.push_back(v->cls);
        input_types.push_back(v->types[0]);
      }
      if (!KeepsProof(rule.rule->rhs_conditions, id, n.kind, n.params, input_types,
                      static_cast<int>(n.output_types.size()), &*facts)) {
        return rejected;
      }
      Value& val = values[id];
      if (all_exist) {
        if (auto c = eg_.Lookup(enode)) val = {*c, eg_.eclass(*c).types};
      }
      if (val.cls < 0) {
        auto types = InferOutputTypes(n.kind, n.params, input_types);
        if (!types.ok()) return rejected;
        val.types = *std::move(types);
        for (EClassId child : enode.children) {
          if (child >= 0) read_by_new.push_back(child);
        }
      }
      if (!rule.rhs_tuple[id]) continue;
      for (size_t j = 0; j < val.types.size(); ++j) {
        Value item{-1, {val.types[j]}};
        if (val.cls >= 0) {
          if (auto c = eg_.Lookup(ENode{rule.item_op[j], {val.cls}})) {
            item = {*c, eg_.eclass(*c).types};
          } else {
            read_by_new.push_back(val.cls);
          }
        }
        items[id].push_back(std::move(item));
      }
    }
    // Each replacement keeps its output's dims and dtype.
    std::vector<EClassId> matched;
    for (EClassId m : match.outputs) matched.push_back(eg_.Find(m));
    for (size_t i = 0; i < matched.size(); ++i) {
      const Value* v = value_of(rhs.outputs()[i].tensor);
      if (v == nullptr || v->types.size() != 1) return rejected;
      const TensorType& want = eg_.eclass(matched[i]).types[0];
      if (v->types[0].dims != want.dims || v->types[0].dtype != want.dtype) return rejected;
      // Merging an existing class into a matched one is cyclic if it reaches a matched class.
      if (v->cls >= 0 && v->cls != matched[i]) read_by_new.push_back(v->cls);
    }
    if (Reaches(read_by_new, std::set<EClassId>(matched.begin(), matched.end()))) return rejected;

    // Commit.
    ApplyOutcome outcome;
    const int before = eg_.enode_capacity();
    std::vector<EClassId> cls(rhs.num_nodes(), -1);
    std::vector<std::vector<EClassId>> item_cls(rhs.num_nodes());
    auto class_of = [&](TensorRef t) { return rule.rhs_tuple[t.node] ? item_cls[t.node][t.index] : cls[t.node]; };
    for (int id : rule.rhs_order) {
      const Node& n = rhs.node(id);
      if (IsInputOrWeight(n.kind)) {
        cls[id] = eg_.Find(match.binding.at(n.name));
        continue;
      }
      ENode enode{rule.rhs_op[id], {}};
      for (const TensorRef& in : n.inputs) enode.children.push_back(class_of(in));
      auto added = eg_.Add(enode);
      if (!added.ok()) return rejected;  // not expected: the dry run inferred the same types
      cls[id] = *added;
      if (!rule.rhs_tuple[id]) continue;
      for (size_t j = 0; j < values[id].types.size(); ++j) {
        auto item = eg_.Add(ENode{rule.item_op[j], {cls[id]}});
        if (!item.ok()) return rejected;
        item_cls[id].push_back(*item);
      }
    }
    for (size_t i = 0; i < matched.size(); ++i) {
      outcome.merged = eg_.Union(matched[i], class_of(rhs.outputs()[i].tensor)) || outcome.merged;
    }
    outcome.added = eg_.enode_capacity() - before;
    return outcome;
  }

 private:
  // Whether any class of `from` is one of `targets` or has one among its
  // descendants (through any e-node).
  bool Reaches(const std::vector<EClassId>& from, const std::set<EClassId>& targets) {
    ++epoch_;
    // Classes lower than every target reach none of them.
    int lowest_target = std::numeric_limits<int>::max();
    for (EClassId t : targets) lowest_target = std::min(lowest_target, eg_.height(t));
    std::vector<EClassId> stack;
    for (EClassId c : from) stack.push_back(eg_.Find(c));
    while (!stack.empty()) {
      const EClassId c = stack.back();
      stack.pop_back();
      if (targets.count(c)) return true;
      if (eg_.height(c) < lowest_target) continue;
      if (c >= static_cast<int>(seen_.size())) seen_.resize(c + 1, 0);
      if (seen_[c] == epoch_) continue;
      seen_[c] = epoch_;
      for (ENodeId id : eg_.eclass(c).nodes) {
        for (EClassId child : eg_.node(id).children) stack.push_back(eg_.Find(child));
      }
    }
    return false;
  }

  EGraph& eg_;
  std::vector<int> seen_;
  int epoch_ = 0;
};

std::string ExtractionName(const Extraction& e) {
  if (e.optimal) return "ilp optimal";
  return e.time_limited ? "ilp (time limit, best found)" : "ilp (best found)";
}

}  // namespace

absl::StatusOr<EqsatResult> EqsatSearch(const Graph& graph, const std::vector<RewriteRule>& rules, CostModel& cost,
                                        const EqsatOptions& options) {
  const absl::Time start = absl::Now();
  if (absl::Status s = graph.Validate(); !s.ok()) return s;
  auto initial = cost.GraphCost(graph);
  if (!initial.ok()) return initial.status();
  auto built = EGraphFromGraph(graph);
  if (!built.ok()) return built.status();
  EGraph& eg = built->egraph;
  const std::vector<EClassId>& roots = built->outputs;

  EqsatResult result;
  SearchReport& report = result.report;
  report.initial_cost_ms = *initial;
  std::vector<CompiledRule> compiled;
  compiled.reserve(rules.size());
  for (const RewriteRule& r : rules) compiled.emplace_back(r, eg);

  auto over_time = [&] { return absl::Now() - start > options.time_limit; };
  const std::string time_stop = absl::StrCat("time limit ", absl::FormatDuration(options.time_limit));
  const std::string node_stop = absl::StrCat("node limit ", options.node_limit);
  Applier applier(eg);
  // Per e-node id: the application that created it (-1: the input's or
  // found existing); per application: its rule's name.
  std::vector<int> created_by(eg.enode_capacity(), -1);
  std::vector<const std::string*> applied_rule;
  std::vector<int> match_cap(compiled.size(), std::max(1, options.max_matches_per_rule));
  std::string stop;
  while (stop.empty()) {
    if (result.iterations >= options.iteration_limit) {
      stop = absl::StrCat("iteration limit ", options.iteration_limit);
      break;
    }
    if (over_time()) {
      stop = time_stop;
      break;
    }
    if (eg.num_enodes() > options.node_limit) {
      stop = node_stop;
      break;
    }
    // Search every rule on the clean e-graph, then apply everything found.
    const EMatchIndex index(eg);
    std::vector<std::pair<const CompiledRule*, std::vector<EMatch>>> found;
    bool truncated = false;
    for (size_t i = 0; i < compiled.size(); ++i) {
      const CompiledRule& r = compiled[i];
      if (!r.valid) continue;
      if (r.pattern.multi_output() && result.iterations >= options.multi_pattern_iteration_limit) continue;
      bool cut = false;
      found.emplace_back(&r, FindEMatches(r.pattern, index, match_cap[i], &cut));
      // Matches are enumerated in the same order every round: a rule cut
      // short gets twice the room next round, or it would never get past
      // the matches it already applied.
      if (cut) match_cap[i] *= 2;
      truncated = truncated || cut;
      if (over_time()) break;
    }
    bool changed = false;
    int applications = 0;
    for (const auto& [rule, matches] : found) {
      for (const EMatch& m : matches) {
        const int first_new = eg.enode_capacity();
        const ApplyOutcome outcome = applier.Apply(*rule, m);
        if (outcome.rejected) {
          ++report.rejected;
        } else if (outcome.added > 0 || outcome.merged) {
          ++report.rules_applied[rule->rule->name];
          created_by.resize(eg.enode_capacity(), -1);
          for (int id = first_new; id < eg.enode_capacity(); ++id) created_by[id] = static_cast<int>(applied_rule.size());
          applied_rule.push_back(&rule->rule->name);
          report.generated += outcome.added;
          changed = true;
        }
        if (eg.num_enodes() > options.node_limit) stop = node_stop;
        if (++applications % 64 == 0 && over_time()) stop = time_stop;
        if (!stop.empty()) break;
      }
      if (!stop.empty()) break;
    }
    if (stop.empty() && over_time()) stop = time_stop;
    eg.Rebuild();
    ++result.iterations;
    if (stop.empty() && !changed && !truncated) stop = "saturated";
  }
  report.expanded = result.iterations;
  result.enodes = eg.num_enodes();
  result.eclasses = eg.num_eclasses();

  // Extraction: the ILP when asked for and it succeeds, else greedy, else
  // the input itself.
  auto costs = ENodeCosts(eg, cost);
  if (!costs.ok()) return costs.status();
  auto greedy = ExtractGreedy(eg, roots, *costs);
  std::optional<Graph> best;
  std::optional<Extraction> used;  // the extraction `best` was built from
  std::string ilp_error;
  if (options.use_ilp && result.enodes > options.ilp_max_enodes) {
    ilp_error = absl::StrCat(result.enodes, " e-nodes, above the ILP limit of ", options.ilp_max_enodes);
  } else if (options.use_ilp) {
    auto ilp = ExtractIlp(eg, roots, *costs, options.ilp_time_limit, greedy.ok() ? &*greedy : nullptr);
    if (ilp.ok() && !ilp->optimal && greedy.ok() && greedy->cost_ms < ilp->cost_ms) {
      // CBC stopped before reaching even its starting point's cost.
      ilp_error = absl::StrCat(ilp->time_limited ? "time limit" : "stopped", ", its best (", ilp->cost_ms,
                               " ms) is dearer than greedy's (", greedy->cost_ms, " ms)");
    } else if (ilp.ok()) {
      auto g = BuildGraph(eg, *ilp, graph, roots);
      if (g.ok()) {
        best = *std::move(g);
        used = *ilp;
        result.extraction = ExtractionName(*ilp);
      } else {
        ilp_error = std::string(g.status().message());
      }
    } else {
      ilp_error = std::string(ilp.status().message());
    }
  }
  std::string kept_input;
  if (!best.has_value()) {
    absl::StatusOr<Graph> g = greedy.ok() ? BuildGraph(eg, *greedy, graph, roots) : greedy.status();
    if (g.ok()) {
      best = *std::move(g);
      used = *greedy;
      result.extraction = options.use_ilp ? absl::StrCat("greedy (ilp failed: ", ilp_error, ")") : "greedy";
    } else {
      result.extraction = absl::StrCat("none (", g.status().message(), ")");
      kept_input = absl::StrCat("extraction failed (", g.status().message(), "); kept the input graph");
    }
  }
  double best_cost = *initial;
  if (best.has_value()) {
    auto c = cost.GraphCost(*best);
    if (!c.ok()) return c.status();
    // Greedy can pick a program dearer than the input (it double-counts
    // shared work): never return something worse than what came in.
    if (*c <= *initial) {
      best_cost = *c;
    } else {
      kept_input = absl::StrCat("extracted program costs ", *c, " ms, more than the input's; kept the input graph");
      best.reset();
    }
  }
  if (best.has_value() && used.has_value()) {
    // Applications whose new e-nodes the returned program is made of.
    std::set<int> applications;
    for (const auto& [cls, enode] : used->choice) {
      if (enode < static_cast<int>(created_by.size()) && created_by[enode] >= 0) applications.insert(created_by[enode]);
    }
    for (int a : applications) ++result.rules_used[*applied_rule[a]];
  }
  result.best = best.has_value() ? *std::move(best) : graph;
  report.best_cost_ms = best_cost;
  report.stop_reason = kept_input.empty() ? stop : absl::StrCat(stop, "; ", kept_input);
  report.elapsed = absl::Now() - start;
  return result;
}

}  // namespace taso::optimizer
