#include "optimizer/eqsat/eqsat.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/op_registry.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/egraph_json.h"
#include "optimizer/eqsat/ematch.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/eqsat/rule_scheduler.h"

namespace taso::optimizer {
namespace {

// A rule prepared for one e-graph: its pattern, and its right side's
// operations interned, in an order where inputs come first.
struct CompiledRule {
  CompiledRule(const RewriteRule& r, EGraph& egraph) : rule(&r), pattern(r, egraph) {
    rhs_op.assign(r.rhs().num_nodes(), -1);
    rhs_tuple.assign(r.rhs().num_nodes(), false);
    for (const Node& n : r.rhs().nodes()) {
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
    for (const Node& n : r.rhs().nodes()) {
      if (!IsInputOrWeight(n.kind)) max_new_enodes += 1 + (rhs_tuple[n.id] ? static_cast<int>(n.output_types.size()) : 0);
    }
    if (auto order = r.rhs().TopologicalOrder(); order.ok()) rhs_order = *order;
    valid = !rhs_order.empty() || r.rhs().num_nodes() == 0;
    for (const Node& n : r.rhs().nodes()) valid = valid && n.kind != OpKind::kOpaque;
  }
  const RewriteRule* rule;
  CompiledPattern pattern;
  std::vector<int> rhs_op;
  std::vector<bool> rhs_tuple;
  std::vector<int> item_op;
  std::vector<int> rhs_order;
  int max_new_enodes = 0;  // at most this many e-nodes per application
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
    const Graph& rhs = rule.rule->rhs();
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
      if (!KeepsProof(rule.rule->rhs_conditions(), id, n.kind, n.params, input_types,
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

std::string IlpDetail(const Extraction& e) {
  if (e.optimal) return "ilp optimal";
  return e.time_limited ? "ilp (time limit, best found)" : "ilp (best found)";
}

// What the sharing moves before the ILP did, for the extraction's detail.
std::string SharingNote(int moves) {
  return moves == 0 ? "" : absl::StrCat(", from ", moves, " sharing move", moves == 1 ? "" : "s");
}

ExtractionOutcome IlpStatus(const Extraction& e) {
  if (e.optimal) return ExtractionOutcome::kIlpOptimal;
  return e.time_limited ? ExtractionOutcome::kIlpTimeLimit : ExtractionOutcome::kIlpStopped;
}

RuleSchedulerOptions SchedulerOptions(const EqsatOptions& options) {
  RuleSchedulerOptions s;
  s.backoff = options.backoff_scheduler;
  s.match_limit = options.max_matches_per_rule;
  s.ban_length = options.backoff_ban_length;
  return s;
}

// One round: search every rule on the clean e-graph, then apply everything
// found, then rebuild; a limit hit during the round is recorded as the stop.
class SaturationRound {
 public:
  SaturationRound(Saturation& sat, const EqsatOptions& options, absl::Time start)
      : sat_(sat), options_(options), start_(start), applier_(sat.egraph) {}

  bool OverTime() const {
    return absl::Now() - start_ > options_.time_limit || (options_.cancelled && options_.cancelled());
  }

  void StopForTime() {
    sat_.stop_reason = SearchStop::kTimeLimit;
    sat_.stop_detail = absl::StrCat("time limit ", absl::FormatDuration(options_.time_limit));
  }
  void StopForNodes() {
    sat_.stop_reason = SearchStop::kNodeLimit;
    sat_.stop_detail = absl::StrCat("node limit ", options_.node_limit);
  }
  bool stopped() const { return sat_.stop_reason != SearchStop::kUnspecified; }
  int held() const { return held_; }  // rules held back for room in the last round

  // Returns whether the round changed the e-graph. Only the rules `patterns`
  // finds for the e-graph's operations are searched, and only those the
  // scheduler has not banned are applied.
  bool Run(const std::vector<CompiledRule>& compiled, const PatternIndex& patterns, RuleScheduler& scheduler) {
    EGraph& eg = sat_.egraph;
    const EMatchIndex index(eg);
    std::vector<Found> found;
    held_ = 0;
    for (int rule : patterns.Candidates(index)) {
      const CompiledRule& r = compiled[rule];
      if (!r.valid) continue;
      // Multi-output rules made at the graph's own shapes (structural
      // merges) match few places: they run every round, like single-output
      // ones, so merges that build on merges (a split's bias adds, a third
      // matmul) finish.
      const bool few_rounds = r.pattern.multi_output() && !r.rule->exact_variable_types;
      const int rounds = r.rule->eqsat_rounds > 0 ? r.rule->eqsat_rounds : options_.multi_pattern_iteration_limit;
      if (few_rounds && sat_.iterations >= rounds) continue;
      if (!scheduler.Searchable(rule, sat_.iterations)) continue;
      bool cut = false;
      std::vector<EMatch> matches = FindEMatches(r.pattern, index, scheduler.SearchLimit(rule), &cut);
      RuleActivity& activity = sat_.activity[r.rule->name];
      ++activity.rounds;
      activity.matches += static_cast<long>(matches.size());
      // Multi-output rules have only their few rounds: cut short, not banned.
      if (scheduler.Admit(rule, sat_.iterations, cut, !few_rounds)) {
        found.push_back({rule, &r, std::move(matches), !few_rounds});
      } else {
        ++activity.bans;
      }
      if (OverTime()) break;
    }
    const int enodes_before = eg.num_enodes();
    // The room is what the matches' estimated sizes may take; the estimate
    // (past e-nodes per application) can fall short, so the round also stops
    // applying once it has really added that much, and the rules it did not
    // finish sit out a ban as those held for room do.
    const int room = options_.backoff_scheduler ? KeepWithinRoom(found, scheduler) : -1;
    bool changed = false;
    bool room_used = false;
    int applications = 0;
    for (size_t k = 0; k < found.size() && !stopped() && !room_used; ++k) {
      const Found& f = found[k];
      for (size_t i = 0; i < f.matches.size(); ++i) {
        room_used = room >= 0 && eg.num_enodes() - enodes_before >= room;
        if (room_used) {
          HoldUnfinished(found, k, scheduler);
          break;
        }
        changed = ApplyOne(*f.compiled, f.matches[i]) || changed;
        if (eg.num_enodes() > options_.node_limit) StopForNodes();
        if (++applications % 64 == 0 && OverTime()) StopForTime();
        if (stopped()) break;
      }
    }
    if (!stopped() && OverTime()) StopForTime();
    eg.Rebuild();
    ++sat_.iterations;
    return changed;
  }

 private:
  // A rule's matches in a round, admitted by the scheduler.
  struct Found {
    int rule;
    const CompiledRule* compiled;
    std::vector<EMatch> matches;
    bool may_ban;  // false: a multi-output rule of few rounds, cut short instead
    bool held = false;  // banned this round for room already
  };

  // The rules that match least go first, and a rule whose matches could add
  // more e-nodes than the round's room left (RoundRoom: half of what is left
  // under the node limit) applies only those that fit and sits out a ban:
  // so the e-graph never reaches its limit, and what a few prolific rules
  // would fill it with does not crowd out the rewrites that match few places
  // (merges, fusions), which the next rounds still have room for.
  // Returns the round's room (e-nodes).
  int KeepWithinRoom(std::vector<Found>& found, RuleScheduler& scheduler) {
    const int round_room = RoundRoom(sat_.egraph.num_enodes(), options_.node_limit);
    const double room_left = round_room;  // the estimates below are fractional
    double total = 0;
    for (const Found& f : found) total += PerMatch(f) * static_cast<double>(f.matches.size());
    if (total <= room_left) return round_room;  // all fit: rules apply in their own order, as without room
    std::stable_sort(found.begin(), found.end(),
                     [](const Found& a, const Found& b) { return a.matches.size() < b.matches.size(); });
    double room = room_left;
    std::vector<Found> kept;
    for (Found& f : found) {
      RuleActivity& activity = sat_.activity[f.compiled->rule->name];
      const double per_match = PerMatch(f);
      const double need = per_match * static_cast<double>(f.matches.size());
      if (need > room) {
        // The matches that fit are applied (or a quiet round would hold the
        // rule again on the same e-graph), and the rule sits out a ban.
        f.matches.resize(static_cast<size_t>(std::max(0.0, room / per_match)));
        if (f.may_ban) {
          f.held = true;
          scheduler.Hold(f.rule, sat_.iterations);
          ++activity.bans;
          ++held_;
        }
      }
      room -= per_match * static_cast<double>(f.matches.size());
      kept.push_back(std::move(f));
    }
    found = std::move(kept);
    return round_room;
  }

  // The round's room ran out within found[k]'s matches: that rule and every
  // later one with matches left sit out a ban (those that may be banned).
  void HoldUnfinished(const std::vector<Found>& found, size_t k, RuleScheduler& scheduler) {
    for (size_t j = k; j < found.size(); ++j) {
      const Found& f = found[j];
      if (f.matches.empty() || !f.may_ban || f.held) continue;
      scheduler.Hold(f.rule, sat_.iterations);
      ++sat_.activity[f.compiled->rule->name].bans;
      ++held_;
    }
  }

  // E-nodes per match: as the rule's applications so far added (most
  // matches of commutativity re-find e-nodes that exist), or at first its
  // right side's whole size.
  double PerMatch(const Found& f) {
    const RuleActivity& activity = sat_.activity[f.compiled->rule->name];
    return activity.tried > 0 ? static_cast<double>(activity.enodes) / activity.tried
                              : std::max(1, f.compiled->max_new_enodes);
  }

  // Applies one match and records which application made the new e-nodes.
  bool ApplyOne(const CompiledRule& rule, const EMatch& m) {
    EGraph& eg = sat_.egraph;
    const int first_new = eg.enode_capacity();
    const ApplyOutcome outcome = applier_.Apply(rule, m);
    ++sat_.activity[rule.rule->name].tried;
    if (outcome.rejected) {
      ++sat_.rejected;
      return false;
    }
    if (outcome.added == 0 && !outcome.merged) return false;
    ++sat_.rules_applied[rule.rule->name];
    RuleActivity& activity = sat_.activity[rule.rule->name];
    ++activity.applied;
    activity.enodes += outcome.added;
    sat_.created_by.resize(eg.enode_capacity(), -1);
    for (int id = first_new; id < eg.enode_capacity(); ++id) {
      sat_.created_by[id] = static_cast<int>(sat_.applied_rule.size());
    }
    sat_.applied_rule.push_back(&rule.rule->name);
    sat_.generated += outcome.added;
    return true;
  }

  Saturation& sat_;
  const EqsatOptions& options_;
  const absl::Time start_;
  Applier applier_;
  int held_ = 0;
};

// The ILP's program, or why there is none (then greedy's is used).
absl::StatusOr<Extraction> IlpExtraction(const Saturation& sat, const std::vector<double>& costs,
                                         const absl::StatusOr<Extraction>& greedy, const EqsatOptions& options,
                                         absl::Duration time_limit) {
  const int enodes = sat.egraph.num_enodes();
  if (enodes > options.ilp_max_enodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(enodes, " e-nodes, above the ILP limit of ", options.ilp_max_enodes));
  }
  if (time_limit < options.ilp_min_time) {
    return absl::DeadlineExceededError(absl::StrCat("not run: ", absl::FormatDuration(time_limit),
                                                    " of the time limit left, it needs at least ",
                                                    absl::FormatDuration(options.ilp_min_time)));
  }
  IlpSettings settings;
  settings.child_memory_mb = options.ilp_memory_mb;
  auto ilp = ExtractIlp(sat.egraph, sat.roots, costs, time_limit, greedy.ok() ? &*greedy : nullptr, settings);
  if (ilp.ok() && !ilp->optimal && greedy.ok() && greedy->cost_ms < ilp->cost_ms) {
    // CBC stopped before reaching even its starting point's cost.
    return absl::DeadlineExceededError(absl::StrCat(ilp->time_limited ? "time limit" : "stopped", ", its best (",
                                                    ilp->cost_ms, " ms) is dearer than greedy's (", greedy->cost_ms,
                                                    " ms)"));
  }
  return ilp;
}

// The rules whose applications made the e-nodes `used` chose, by name.
std::map<std::string, int> RulesUsed(const Saturation& sat, const Extraction& used) {
  std::set<int> applications;
  for (const auto& [cls, enode] : used.choice) {
    if (enode < static_cast<int>(sat.created_by.size()) && sat.created_by[enode] >= 0) {
      applications.insert(sat.created_by[enode]);
    }
  }
  std::map<std::string, int> rules_used;
  for (int a : applications) ++rules_used[*sat.applied_rule[a]];
  return rules_used;
}

}  // namespace

std::string MostProlificRules(const Saturation& sat, int n) {
  std::vector<std::pair<std::string, RuleActivity>> rules(sat.activity.begin(), sat.activity.end());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.second.enodes > b.second.enodes; });
  std::string out;
  for (int i = 0; i < n && i < static_cast<int>(rules.size()); ++i) {
    const RuleActivity& a = rules[i].second;
    absl::StrAppend(&out, i > 0 ? "; " : "", rules[i].first, ": ", a.enodes, " e-nodes from ", a.applied,
                    " applications of ", a.matches, " matches in ", a.rounds, " rounds, ", a.bans, " bans");
  }
  return out;
}

absl::StatusOr<Saturation> Saturate(const Graph& graph, const std::vector<RewriteRule>& rules,
                                    const EqsatOptions& options) {
  const absl::Time start = absl::Now();
  if (absl::Status s = graph.Validate(); !s.ok()) return s;
  auto built = EGraphFromGraph(graph);
  if (!built.ok()) return built.status();
  Saturation sat{std::move(built->egraph), std::move(built->outputs)};
  EGraph& eg = sat.egraph;
  std::vector<CompiledRule> compiled;
  compiled.reserve(rules.size());
  for (const RewriteRule& r : rules) compiled.emplace_back(r, eg);
  sat.created_by.assign(eg.enode_capacity(), -1);
  sat.input_enodes = eg.enode_capacity();
  std::vector<const CompiledPattern*> pattern_of;
  for (const CompiledRule& r : compiled) pattern_of.push_back(&r.pattern);
  const PatternIndex patterns(pattern_of);
  RuleScheduler scheduler(static_cast<int>(compiled.size()), SchedulerOptions(options));
  SaturationRound round(sat, options, start);
  while (!round.stopped()) {
    if (options.goal && options.goal(eg)) {
      sat.stop_reason = SearchStop::kGoalReached;
      sat.stop_detail = "goal reached";
    } else if (sat.iterations >= options.iteration_limit) {
      sat.stop_reason = SearchStop::kIterationLimit;
      sat.stop_detail = absl::StrCat("iteration limit ", options.iteration_limit);
    } else if (round.OverTime()) {
      round.StopForTime();
    } else if (eg.num_enodes() > options.node_limit) {
      round.StopForNodes();
    } else {
      const int iteration = sat.iterations;
      const bool changed = round.Run(compiled, patterns, scheduler);
      if (options.progress != nullptr) {
        SearchProgress now;
        now.iterations = sat.iterations;
        now.enodes = eg.num_enodes();
        options.progress->SearchUpdate(now);
      }
      if (std::getenv("TASO_EQSAT_TRACE") != nullptr) {
        std::cerr << "eqsat round " << iteration << ": " << eg.num_enodes() << " e-nodes, " << eg.num_eclasses()
                  << " e-classes, " << absl::ToDoubleSeconds(absl::Now() - start) << " s; top: "
                  << MostProlificRules(sat, 8) << "\n";
      }
      if (changed || round.stopped()) continue;
      if (round.held() > 0) {
        // Rules were held and none of their matches fit: lifting their bans
        // would hold them again on the same e-graph.
        sat.stop_reason = SearchStop::kNodeLimit;
        sat.stop_detail = absl::StrCat("node limit ", options.node_limit, " (no room for the matches of ",
                                       round.held(), " rules)");
        continue;
      }
      if (scheduler.Pending(iteration)) {
        // Nothing changed but some rule sat out (or was cut short): search
        // them next round rather than wait out their bans.
        scheduler.LiftBans(sat.iterations);
        continue;
      }
      sat.stop_reason = SearchStop::kSaturated;
      sat.stop_detail = "saturated";
    }
  }
  sat.rule_bans = scheduler.bans();
  return sat;
}

absl::StatusOr<ExtractedProgram> Extract(const Saturation& sat, const Graph& original, CostModel& cost,
                                         const EqsatOptions& options, absl::Time deadline) {
  const absl::Time start = absl::Now();
  ExtractedProgram out;
  const absl::Time costing_deadline =
      deadline == absl::InfiniteFuture()
          ? deadline
          : deadline - options.time_limit * std::clamp(options.ilp_share, 0.0, 1.0);
  auto costs = ENodeCosts(sat.egraph, cost, costing_deadline, &out.unpriced, sat.input_enodes);
  if (!costs.ok()) return costs.status();
  if (!options.dump_egraph.empty()) {
    const ExtractionProblem problem = MakeExtractionProblem(sat.egraph, sat.roots, *costs, /*labels=*/true);
    if (absl::Status s = WriteEGraphJson(problem, options.dump_egraph); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("--dump-egraph: ", s.message()));
    }
  }
  const absl::Time costed = absl::Now();
  out.costing_time = costed - start;
  // DAG greedy, then sharing moves (a quarter of the time left at most):
  // never dearer than greedy, the ILP's starting point and cutoff, and the
  // program when the ILP is not run or fails. The ILP alone did not find
  // the batched input side of an unrolled LSTM (1.40x) in 60 s.
  const absl::Time sharing_deadline =
      deadline == absl::InfiniteFuture() ? deadline : absl::Now() + (deadline - absl::Now()) / 4;
  auto greedy = ExtractGreedyDag(sat.egraph, sat.roots, *costs, deadline, sharing_deadline, &out.sharing_moves);
  std::string ilp_error;
  if (options.use_ilp) {
    out.ilp = IlpVerdict::kNoResult;
    const absl::Duration left = std::max(absl::ZeroDuration(), deadline - absl::Now());
    const absl::Duration limit = std::min(options.ilp_time_limit, left);
    if (limit >= options.ilp_min_time && sat.egraph.num_enodes() <= options.ilp_max_enodes) {
      out.ilp_time_limit = limit;
    }
    auto ilp = IlpExtraction(sat, *costs, greedy, options, limit);
    absl::StatusOr<Graph> g = ilp.ok() ? BuildGraph(sat.egraph, *ilp, original, sat.roots) : ilp.status();
    if (g.ok()) {
      out.graph = *std::move(g);
      out.used = *ilp;
      out.status = IlpStatus(*ilp);
      out.detail = absl::StrCat(IlpDetail(*ilp), SharingNote(out.sharing_moves));
      out.ilp = ilp->optimal ? IlpVerdict::kOptimal : IlpVerdict::kStoppedWithGap;
      out.ilp_incumbent_ms = ilp->cost_ms;
      out.ilp_bound_ms = ilp->lower_bound_ms;
      out.ilp_gap = ilp->cost_ms > 0 ? (ilp->cost_ms - ilp->lower_bound_ms) / ilp->cost_ms : 0;
      out.extraction_time = absl::Now() - costed;
      return out;
    }
    ilp_error = std::string(g.status().message());
  }
  absl::StatusOr<Graph> g = greedy.ok() ? BuildGraph(sat.egraph, *greedy, original, sat.roots) : greedy.status();
  out.extraction_time = absl::Now() - costed;
  if (!g.ok()) {
    out.status = ExtractionOutcome::kFailed;
    out.detail = absl::StrCat("none (", g.status().message(), ")");
    out.failure = absl::StrCat("extraction failed (", g.status().message(), "); kept the input graph");
    return out;
  }
  out.graph = *std::move(g);
  out.used = *greedy;
  out.status = options.use_ilp ? ExtractionOutcome::kGreedyIlpFailed : ExtractionOutcome::kGreedy;
  out.detail = options.use_ilp ? absl::StrCat("greedy (ilp ", absl::StartsWith(ilp_error, "not run") ? "" : "failed: ", ilp_error, ")") : "greedy";
  absl::StrAppend(&out.detail, SharingNote(out.sharing_moves));
  return out;
}

absl::StatusOr<EqsatResult> EqsatSearch(const Graph& graph, const std::vector<RewriteRule>& rules, CostModel& cost,
                                        const EqsatOptions& options) {
  const absl::Time start = absl::Now();
  if (absl::Status s = graph.Validate(); !s.ok()) return s;
  auto initial = cost.GraphCost(graph);
  if (!initial.ok()) return initial.status();
  // One budget: exploration takes at most its share, and what it leaves
  // goes to costing and extraction.
  const absl::Time deadline = start + options.time_limit;
  EqsatOptions exploration = options;
  exploration.time_limit = options.time_limit * std::clamp(options.exploration_share, 0.0, 1.0);
  auto sat = Saturate(graph, rules, exploration);
  if (!sat.ok()) return sat.status();
  const absl::Time explored = absl::Now();
  EnterPhase(options.progress, OptimizePhase::kExtraction);
  auto program = Extract(*sat, graph, cost, options, deadline);
  if (!program.ok()) return program.status();

  EqsatResult result{graph};
  SearchReport& report = result.report;
  report.initial_cost_ms = report.best_cost_ms = *initial;
  report.expanded = result.iterations = sat->iterations;
  report.generated = sat->generated;
  report.rejected = sat->rejected;
  report.rule_bans = sat->rule_bans;
  report.rules_applied = sat->rules_applied;
  report.stop_reason = sat->stop_reason;
  report.extraction = program->status;
  report.extraction_detail = program->unpriced == 0 ? program->detail
                                                     : absl::StrCat(program->detail, "; ", program->unpriced,
                                                                    " operators not costed in time, not chosen");
  report.ilp = program->ilp;
  report.ilp_incumbent_ms = program->ilp_incumbent_ms;
  report.extraction_cost_ms = program->used ? program->used->cost_ms : 0;
  report.ilp_bound_ms = program->ilp_bound_ms;
  report.ilp_gap = program->ilp_gap;
  report.ilp_time_limit = program->ilp_time_limit;
  report.exploration_time = explored - start;
  report.costing_time = program->costing_time;
  report.extraction_time = program->extraction_time;
  result.enodes = sat->egraph.num_enodes();
  result.eclasses = sat->egraph.num_eclasses();
  std::string kept_input = program->failure;
  if (program->graph.has_value()) {
    auto c = cost.GraphCost(*program->graph);
    if (!c.ok()) return c.status();
    // Greedy can pick a program dearer than the input (it double-counts
    // shared work): never return something worse than what came in.
    if (*c <= *initial) {
      report.best_cost_ms = *c;
      result.best = *std::move(program->graph);
      result.rules_used = RulesUsed(*sat, *program->used);
    } else {
      kept_input = absl::StrCat("extracted program costs ", *c, " ms, more than the input's; kept the input graph");
    }
  }
  report.stop_detail = kept_input.empty() ? sat->stop_detail : absl::StrCat(sat->stop_detail, "; ", kept_input);
  report.elapsed = absl::Now() - start;
  return result;
}

}  // namespace taso::optimizer
