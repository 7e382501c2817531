// Equality saturation with e-graphs: every graph a search returns is checked
// against the float interpreter on deterministic random inputs, and costs
// come from a real in-process profiler (the analytic backend, deterministic).
#include "optimizer/eqsat/eqsat.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/eqsat/egraph.h"
#include "optimizer/eqsat/ematch.h"
#include "optimizer/eqsat/extract.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/passes/structural_rules.h"
#include "optimizer/rewrite/test_util.h"
#include "costs/client.h"

namespace taso::optimizer {
namespace {

using testing::BothWays;
using testing::ConvRelu;
using testing::ExpectEquivalent;
using testing::F32;
using testing::Forward;
using testing::MakeRule;
using testing::RowsMatMulCycleHost;
using testing::RowsMatMuls;
using testing::SharedInputMatMulHost;
using testing::SharedInputMatMuls;

int CountOps(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind ? 1 : 0;
  return n;
}

class EqsatTest : public testing::AnalyticProfilerTest {};

TEST_F(EqsatTest, MergesMatMulsThatShareAnInput) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(result->report.best_cost_ms, result->report.initial_cost_ms);
  EXPECT_EQ(CountOps(result->best, OpKind::kMatMul), 1);
  EXPECT_EQ(CountOps(result->best, OpKind::kSplit), 1);
  EXPECT_GE(result->report.rules_applied.count("mm2"), 1u);
  // The result is made of one application of the rule (its reverse, also in
  // the e-graph, added nothing the result uses).
  EXPECT_EQ(result->rules_used, (std::map<std::string, int>{{"mm2", 1}}));
  EXPECT_THAT(result->report.extraction_detail, ::testing::StartsWith("ilp optimal"));
  EXPECT_EQ(result->report.stop_reason, SearchStop::kSaturated);
  ASSERT_EQ(result->best.outputs().size(), 2u);
  EXPECT_EQ(result->best.outputs()[0].name, "a");
  EXPECT_EQ(result->best.outputs()[1].name, "b");
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatTest, FindsConvReluFusion) {
  const Graph host = ConvRelu();
  CostModel cost(client_.get());
  auto result = EqsatSearch(host, StructuralRewrites(host), cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(result->report.best_cost_ms, result->report.initial_cost_ms);
  EXPECT_EQ(result->best.num_ops(), 1);
  ASSERT_EQ(result->report.rules_applied.size(), 1u);
  EXPECT_NE(result->report.rules_applied.begin()->first.find("fuse:conv2d+relu"), std::string::npos);
  ASSERT_EQ(result->rules_used.size(), 1u);
  EXPECT_EQ(result->rules_used.begin()->first, result->report.rules_applied.begin()->first);
  EXPECT_EQ(result->rules_used.begin()->second, 1);
  EXPECT_EQ(result->report.stop_reason, SearchStop::kSaturated);
  ExpectEquivalent(host, result->best);
}

// The ILP running out of time says nothing about why saturation stopped:
// the search saturated, and extraction reports its own time limit.
TEST_F(EqsatTest, IlpTimeLimitAfterSaturationIsReportedAsExtractionOutcome) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  EqsatOptions options;
  options.ilp_time_limit = absl::ZeroDuration();
  options.ilp_min_time = absl::ZeroDuration();  // run it all the same
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.stop_reason, SearchStop::kSaturated);
  EXPECT_EQ(result->report.stop_detail, "saturated");
  EXPECT_EQ(result->report.extraction, ExtractionOutcome::kIlpTimeLimit);
  EXPECT_THAT(result->report.extraction_detail, ::testing::StartsWith("ilp (time limit, best found)"));
  // CBC never ran: the incumbent is greedy's, with no bound, so the gap is all of it.
  EXPECT_EQ(result->report.ilp, IlpVerdict::kStoppedWithGap);
  EXPECT_GT(result->report.ilp_incumbent_ms, 0);
  EXPECT_EQ(result->report.ilp_bound_ms, 0);
  EXPECT_EQ(result->report.ilp_gap, 1);
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatTest, SaturateThenExtractAreSeparateSteps) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  auto sat = Saturate(host, BothWays(SharedInputMatMuls()));
  ASSERT_TRUE(sat.ok()) << sat.status();
  EXPECT_EQ(sat->stop_reason, SearchStop::kSaturated);
  EXPECT_GE(sat->rules_applied.count("mm2"), 1u);
  EqsatOptions greedy_only;
  greedy_only.use_ilp = false;
  auto program = Extract(*sat, host, cost, greedy_only);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->status, ExtractionOutcome::kGreedy);
  ASSERT_TRUE(program->graph.has_value());
  ExpectEquivalent(host, *program->graph);
}

// The e-graph the matmul rule makes, built by hand: each output's class holds
// its own matmul and a get-item of one shared split(matmul(x, concat(p, q))).
struct MergedMatMuls {
  GraphEGraph g;
  ENodeId merged_matmul = -1;
  ENodeId split = -1;
};

MergedMatMuls BuildMergedMatMuls(const Graph& host) {
  MergedMatMuls m;
  auto g = EGraphFromGraph(host);
  EXPECT_TRUE(g.ok()) << g.status();
  m.g = *std::move(g);
  EGraph& eg = m.g.egraph;
  auto var = [&](const std::string& name) {
    EOp op;
    op.role = EOp::Role::kVariable;
    op.name = name;
    return *eg.Lookup(ENode{eg.InternOp(op), {}});
  };
  auto op = [&](OpKind kind, int axis) {
    EOp o;
    o.kind = kind;
    o.params.axis = axis;
    return eg.InternOp(o);
  };
  EOp item;
  item.role = EOp::Role::kGetItem;
  auto cat = eg.Add(ENode{op(OpKind::kConcat, 1), {var("p"), var("q")}});
  auto mm = eg.Add(ENode{op(OpKind::kMatMul, 0), {var("x"), *cat}});
  auto split = eg.Add(ENode{op(OpKind::kSplit, 1), {*mm}});
  item.item = 0;
  auto a = eg.Add(ENode{eg.InternOp(item), {*split}});
  item.item = 1;
  auto b = eg.Add(ENode{eg.InternOp(item), {*split}});
  EXPECT_TRUE(a.ok() && b.ok());
  eg.Union(m.g.outputs[0], *a);
  eg.Union(m.g.outputs[1], *b);
  eg.Rebuild();
  m.merged_matmul = eg.eclass(*mm).nodes[0];
  m.split = eg.eclass(*split).nodes[0];
  return m;
}

TEST_F(EqsatTest, NewWeightsCostTheirElementsAndTransposedOnesAreFree) {
  // A concatenated weight is new memory every use streams, so extraction
  // pays for it (once, in the ILP, however many share it); a transposed
  // weight is no larger than its input and stays free.
  Graph host;
  TensorRef x = host.AddInput("x", F32({2, 4}));
  TensorRef w1 = host.AddWeight("w1", F32({4, 4}));
  TensorRef w2 = host.AddWeight("w2", F32({4, 4}));
  OpParams axis1, swap;
  axis1.axis = 1;
  swap.perm = {1, 0};
  TensorRef cat = *host.AddOp1(OpKind::kConcat, axis1, {w1, w2});
  host.AddOutput("a", *host.AddOp1(OpKind::kMatMul, {}, {x, cat}));
  host.AddOutput("b", *host.AddOp1(OpKind::kMatMul, {}, {x, *host.AddOp1(OpKind::kTranspose, swap, {w1})}));
  auto g = EGraphFromGraph(host);
  ASSERT_TRUE(g.ok()) << g.status();
  CostModel cost(client_.get());
  auto costs = ENodeCosts(g->egraph, cost);
  ASSERT_TRUE(costs.ok()) << costs.status();
  int seen = 0;
  for (ENodeId id = 0; id < g->egraph.enode_capacity(); ++id) {
    if (!g->egraph.alive(id)) continue;
    const OpKind kind = g->egraph.op(g->egraph.node(id).op).kind;
    if (kind == OpKind::kConcat) {
      EXPECT_DOUBLE_EQ((*costs)[id], kFoldedElementCostMs * 32);
      ++seen;
    } else if (kind == OpKind::kTranspose) {
      EXPECT_EQ((*costs)[id], 0);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

TEST_F(EqsatTest, IlpCountsSharedWorkOnceWhereGreedyCountsItTwice) {
  const Graph host = SharedInputMatMulHost();
  MergedMatMuls m = BuildMergedMatMuls(host);
  const EGraph& eg = m.g.egraph;
  CostModel cost(client_.get());
  auto costs = ENodeCosts(eg, cost);
  ASSERT_TRUE(costs.ok()) << costs.status();
  // Costs where the merged matmul is dearer than either small one but
  // cheaper than both: greedy, costing each output alone, keeps the two.
  for (ENodeId id = 0; id < eg.enode_capacity(); ++id) {
    if (!eg.alive(id) || eg.op(eg.node(id).op).kind != OpKind::kMatMul) continue;
    (*costs)[id] = id == m.merged_matmul ? 4.0 : 3.0;
  }
  (*costs)[m.split] = 0.5;
  auto greedy = ExtractGreedy(eg, m.g.outputs, *costs);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  auto ilp = ExtractIlp(eg, m.g.outputs, *costs, absl::Seconds(10), &*greedy);
  ASSERT_TRUE(ilp.ok()) << ilp.status();
  EXPECT_DOUBLE_EQ(greedy->cost_ms, 6.0);
  EXPECT_NEAR(ilp->cost_ms, 4.5, 1e-3);  // and the merged weight's small charge (extract.h)
  EXPECT_TRUE(ilp->optimal);
  auto built = BuildGraph(eg, *ilp, host, m.g.outputs);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(CountOps(*built, OpKind::kMatMul), 1);
  ExpectEquivalent(host, *built);

  // With the profiler's own costs the ILP is never worse than greedy.
  auto real = ENodeCosts(eg, cost);
  ASSERT_TRUE(real.ok());
  auto real_greedy = ExtractGreedy(eg, m.g.outputs, *real);
  auto real_ilp = ExtractIlp(eg, m.g.outputs, *real, absl::Seconds(10), &*real_greedy);
  ASSERT_TRUE(real_greedy.ok() && real_ilp.ok());
  EXPECT_LE(real_ilp->cost_ms, real_greedy->cost_ms + 1e-9);
  // And the whole search agrees.
  EqsatOptions greedy_only;
  greedy_only.use_ilp = false;
  auto by_greedy = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost, greedy_only);
  auto by_ilp = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost);
  ASSERT_TRUE(by_greedy.ok() && by_ilp.ok());
  EXPECT_LE(by_ilp->report.best_cost_ms, by_greedy->report.best_cost_ms + 1e-9);
}

TEST_F(EqsatTest, ExtractionAvoidsCyclesInTheEGraph) {
  // x == split(concat(x, y))[0] puts x's class on a cycle through the
  // concat, the split and the get-item; both extractions must break it.
  Graph host;
  TensorRef x = host.AddInput("x", F32({4, 4}));
  host.AddInput("y", F32({4, 4}));
  host.AddOutput("r", *host.AddOp1(OpKind::kRelu, {}, {x}));
  auto g = EGraphFromGraph(host);
  ASSERT_TRUE(g.ok()) << g.status();
  EGraph& eg = g->egraph;
  auto var = [&](const std::string& name) {
    EOp op;
    op.role = EOp::Role::kVariable;
    op.name = name;
    return *eg.Lookup(ENode{eg.InternOp(op), {}});
  };
  EOp concat, split, item;
  concat.kind = OpKind::kConcat;
  split.kind = OpKind::kSplit;
  item.role = EOp::Role::kGetItem;
  item.item = 0;
  auto cat = eg.Add(ENode{eg.InternOp(concat), {var("x"), var("y")}});
  ASSERT_TRUE(cat.ok()) << cat.status();
  auto parts = eg.Add(ENode{eg.InternOp(split), {*cat}});
  ASSERT_TRUE(parts.ok()) << parts.status();
  auto first = eg.Add(ENode{eg.InternOp(item), {*parts}});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(eg.Union(var("x"), *first));
  eg.Rebuild();
  CostModel cost(client_.get());
  auto costs = ENodeCosts(eg, cost);
  ASSERT_TRUE(costs.ok());
  auto greedy = ExtractGreedy(eg, g->outputs, *costs);
  auto ilp = ExtractIlp(eg, g->outputs, *costs, absl::Seconds(10), nullptr);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  ASSERT_TRUE(ilp.ok()) << ilp.status();
  for (const Extraction* e : {&*greedy, &*ilp}) {
    auto built = BuildGraph(eg, *e, host, g->outputs);
    ASSERT_TRUE(built.ok()) << built.status();
    EXPECT_EQ(built->num_ops(), 1);
    ExpectEquivalent(host, *built);
  }
  // A choice that follows the cycle is refused, not built.
  Extraction cyclic = *greedy;
  cyclic.choice[eg.Find(var("x"))] = eg.eclass(*first).nodes.back();
  cyclic.choice[eg.Find(*parts)] = eg.eclass(*parts).nodes[0];
  cyclic.choice[eg.Find(*cat)] = eg.eclass(*cat).nodes[0];
  for (ENodeId id : eg.eclass(var("x")).nodes) {
    if (eg.op(eg.node(id).op).role == EOp::Role::kGetItem) cyclic.choice[eg.Find(var("x"))] = id;
  }
  auto refused = BuildGraph(eg, cyclic, host, g->outputs);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
}

// Whether the choice's picks, followed from the roots, are complete and reach
// no class twice on one path.
bool IsAcyclicChoice(const ExtractionProblem& p, const std::vector<int>& pick) {
  std::vector<int> state(p.class_id.size(), 0);  // 0 unseen, 1 on the path, 2 done
  std::function<bool(int)> visit = [&](int c) {
    if (state[c] == 1 || pick[c] < 0) return false;
    if (state[c] == 2) return true;
    state[c] = 1;
    for (int d : p.node_children[pick[c]]) {
      if (!visit(d)) return false;
    }
    state[c] = 2;
    return true;
  };
  for (int r : p.roots) {
    if (!visit(r)) return false;
  }
  return true;
}

// A problem from (class, cost, children) e-nodes, the roots first classes.
ExtractionProblem MakeProblem(int classes, const std::vector<std::tuple<int, double, std::vector<int>>>& nodes,
                              std::vector<int> roots) {
  ExtractionProblem p;
  p.class_nodes.resize(classes);
  for (int c = 0; c < classes; ++c) p.class_id.push_back(c);
  for (const auto& [cls, cost, children] : nodes) {
    p.class_nodes[cls].push_back(static_cast<int>(p.node_id.size()));
    p.node_id.push_back(static_cast<int>(p.node_id.size()));
    p.node_class.push_back(cls);
    p.node_cost.push_back(cost);
    std::vector<int> sorted = children;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    p.node_children.push_back(sorted);
  }
  p.roots = std::move(roots);
  return p;
}

const std::vector<IlpSettings::Acyclicity> kAcyclicities = {IlpSettings::Acyclicity::kLinearOrder,
                                                            IlpSettings::Acyclicity::kLazyCycleCuts,
                                                            IlpSettings::Acyclicity::kOrderVariables};

TEST_F(EqsatTest, EveryIlpFormulationRefusesAFreeCycle) {
  // a = f(b) (free) or leaf (10); b = g(a) (free) or leaf (5); c = h(b) (1).
  // Without acyclicity a and b would support each other for nothing.
  const ExtractionProblem p = MakeProblem(3, {{0, 0.0, {1}}, {0, 10.0, {}}, {1, 0.0, {0}}, {1, 5.0, {}}, {2, 1.0, {1}}},
                                          {0, 2});
  for (IlpSettings::Acyclicity acyclicity : kAcyclicities) {
    for (IlpSettings::WarmStart warm : {IlpSettings::WarmStart::kCutoff, IlpSettings::WarmStart::kMipStart,
                                        IlpSettings::WarmStart::kNone}) {
      for (bool prune : {true, false}) {
        IlpSettings settings;
        settings.acyclicity = acyclicity;
        settings.warm_start = warm;
        settings.prune = prune;
        settings.cycle_limit = 0;  // every cycle cut lazily
        IlpStats stats;
        auto ilp = SolveIlp(p, absl::Seconds(10), nullptr, settings, &stats);
        ASSERT_TRUE(ilp.ok()) << ilp.status();
        EXPECT_TRUE(IsAcyclicChoice(p, ilp->pick));
        EXPECT_DOUBLE_EQ(ilp->cost_ms, 6.0);  // a = f(b), b = leaf, c = h(b)
        EXPECT_TRUE(ilp->optimal) << stats.outcome;
      }
    }
  }
}

// A and C each cost 10 on their own or nothing through the other. With a
// linear order (or cycle cuts) alone the relaxation takes each half way
// round the cycle and pays 5; a chosen "A through C" needs C's e-node that
// does not read A, which makes the relaxation exact.
TEST_F(EqsatTest, AcyclicChildRowsCloseTheRelaxationOfATwoCycle) {
  const ExtractionProblem p = MakeProblem(2, {{0, 10.0, {}}, {0, 0.0, {1}}, {1, 10.0, {}}, {1, 0.0, {0}}}, {0});
  for (IlpSettings::Acyclicity acyclicity : kAcyclicities) {
    IlpSettings weak;
    weak.acyclicity = acyclicity;
    weak.acyclic_child_rows = false;
    IlpSettings strong = weak;
    strong.acyclic_child_rows = true;
    IlpStats weak_stats, strong_stats;
    ASSERT_TRUE(SolveIlpRelaxation(p, weak, &weak_stats).ok());
    ASSERT_TRUE(SolveIlpRelaxation(p, strong, &strong_stats).ok());
    EXPECT_LT(weak_stats.lower_bound_ms, 10 - 1e-6) << static_cast<int>(acyclicity);
    EXPECT_NEAR(strong_stats.lower_bound_ms, 10, 1e-6) << static_cast<int>(acyclicity);
    EXPECT_GE(strong_stats.acyclic_child_rows, 2);
  }
}

TEST_F(EqsatTest, LazyCycleCutsNeverReturnACycle) {
  // A ring of classes, each free through the next, cheap through the one
  // after, or dear on its own: CBC's first solutions are cycles, cut one by
  // one.
  std::vector<std::tuple<int, double, std::vector<int>>> nodes;
  const int ring = 6;
  for (int c = 0; c < ring; ++c) {
    nodes.push_back({c, 0.0, {(c + 1) % ring}});
    nodes.push_back({c, 3.0 + c, {}});
    nodes.push_back({c, 0.5, {(c + 2) % ring}});
  }
  const ExtractionProblem p = MakeProblem(ring, nodes, {0, 3});
  IlpSettings settings;
  settings.acyclicity = IlpSettings::Acyclicity::kLazyCycleCuts;
  settings.cycle_limit = 0;
  settings.acyclic_child_rows = false;  // (the default) they would forbid these cycles up front
  IlpStats stats;
  auto ilp = SolveIlp(p, absl::Seconds(20), nullptr, settings, &stats);
  ASSERT_TRUE(ilp.ok()) << ilp.status();
  EXPECT_TRUE(IsAcyclicChoice(p, ilp->pick));
  EXPECT_TRUE(ilp->optimal) << stats.outcome;
  EXPECT_GE(stats.cyclic_solutions, 1);
  EXPECT_EQ(stats.solves, stats.cyclic_solutions + 1);
  // Every formulation agrees on the optimum, also a linear order that only
  // fits smaller components (this one falls back to cycle cuts).
  for (int limit : {50, 3}) {
    for (IlpSettings::Acyclicity acyclicity : kAcyclicities) {
      IlpSettings other;
      other.acyclicity = acyclicity;
      other.linear_order_limit = limit;
      auto again = SolveIlp(p, absl::Seconds(20), nullptr, other);
      ASSERT_TRUE(again.ok()) << again.status();
      EXPECT_TRUE(IsAcyclicChoice(p, again->pick));
      EXPECT_NEAR(again->cost_ms, ilp->cost_ms, 1e-9);
    }
  }
}

// The least cost of an acyclic choice, by trying every pick per class.
double BruteForceOptimum(const ExtractionProblem& p) {
  const int classes = static_cast<int>(p.class_id.size());
  std::vector<int> index(classes, 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    std::vector<int> pick(classes);
    for (int c = 0; c < classes; ++c) pick[c] = p.class_nodes[c][index[c]];
    if (IsAcyclicChoice(p, pick)) {
      std::vector<bool> needed(classes, false);
      std::function<void(int)> mark = [&](int c) {
        if (needed[c]) return;
        needed[c] = true;
        for (int d : p.node_children[pick[c]]) mark(d);
      };
      for (int r : p.roots) mark(r);
      double cost = 0;
      for (int c = 0; c < classes; ++c) cost += needed[c] ? p.node_cost[pick[c]] : 0;
      best = std::min(best, cost);
    }
    int c = 0;
    while (c < classes && ++index[c] == static_cast<int>(p.class_nodes[c].size())) index[c++] = 0;
    if (c == classes) return best;
  }
}

TEST_F(EqsatTest, IlpMatchesBruteForceOnRandomCyclicProblems) {
  // Small random e-graphs with cycles, shared children and free e-nodes: every
  // formulation, pruned or not, finds the true optimum, acyclic, no dearer
  // than greedy.
  std::mt19937 rng(7);
  int solved = 0, improved = 0, cyclic = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int classes = 4 + trial % 4;
    std::vector<std::tuple<int, double, std::vector<int>>> nodes;
    for (int c = 0; c < classes; ++c) {
      const int count = 1 + rng() % 3;
      for (int k = 0; k < count; ++k) {
        std::vector<int> children;
        const int arity = rng() % 3;
        for (int a = 0; a < arity; ++a) {
          const int d = rng() % classes;
          if (d != c) children.push_back(d);
        }
        const double costs[] = {0.0, 0.0, 1.0, 2.0, 3.0, 5.0};
        nodes.push_back({c, costs[rng() % 6], children});
      }
    }
    const ExtractionProblem p = MakeProblem(classes, nodes, {0, classes - 1});
    auto greedy = SolveGreedy(p);
    const double optimum = BruteForceOptimum(p);
    if (!greedy.ok()) {
      EXPECT_EQ(optimum, std::numeric_limits<double>::infinity());
      continue;
    }
    ++solved;
    improved += optimum < greedy->cost_ms - 1e-9 ? 1 : 0;
    for (IlpSettings::Acyclicity acyclicity : kAcyclicities) {
      for (bool prune : {true, false}) {
        IlpSettings settings;
        settings.acyclicity = acyclicity;
        settings.prune = prune;
        settings.cycle_limit = trial % 2 == 0 ? 0 : 1000;
        settings.linear_order_limit = trial % 3 == 0 ? 2 : 50;  // larger components: cycle cuts
        IlpStats stats;
        auto ilp = SolveIlp(p, absl::Seconds(10), &*greedy, settings, &stats);
        ASSERT_TRUE(ilp.ok()) << ilp.status();
        EXPECT_TRUE(IsAcyclicChoice(p, ilp->pick)) << "trial " << trial;
        EXPECT_LE(ilp->cost_ms, greedy->cost_ms + 1e-9);
        EXPECT_NEAR(ilp->cost_ms, optimum, 1e-9) << "trial " << trial << " " << stats.outcome;
        EXPECT_TRUE(ilp->optimal) << "trial " << trial << " " << stats.outcome;
        cyclic += stats.cyclic_solutions > 0 || stats.ordered_components > 0 || stats.upfront_cycles > 0 ? 1 : 0;
      }
    }
  }
  EXPECT_GE(solved, 30);
  EXPECT_GE(improved, 5);  // sharing beats greedy
  EXPECT_GE(cyclic, 20);   // cycles were there to avoid
}

TEST_F(EqsatTest, IlpWithoutTimeReturnsTheBestStartingPoint) {
  const ExtractionProblem p = MakeProblem(3, {{0, 0.0, {1}}, {0, 10.0, {}}, {1, 0.0, {0}}, {1, 5.0, {}}, {2, 1.0, {1}}},
                                          {0, 2});
  ProblemChoice warm;
  warm.pick = {0, 3, 4};  // a = f(b), b = leaf, c = h(b): 6, the optimum
  warm.cost_ms = 6;
  auto ilp = SolveIlp(p, absl::ZeroDuration(), &warm);
  ASSERT_TRUE(ilp.ok()) << ilp.status();
  EXPECT_EQ(ilp->pick, warm.pick);
  EXPECT_DOUBLE_EQ(ilp->cost_ms, 6.0);
  EXPECT_TRUE(ilp->time_limited);
  EXPECT_FALSE(ilp->optimal);
  // A dearer warm start loses to DAG greedy's choice, even without time.
  ProblemChoice dear;
  dear.pick = {1, 3, 4};  // a = leaf, b = leaf, c = h(b): 16
  auto from_dear = SolveIlp(p, absl::ZeroDuration(), &dear);
  ASSERT_TRUE(from_dear.ok()) << from_dear.status();
  EXPECT_DOUBLE_EQ(from_dear->cost_ms, 6.0);
  // A cyclic "warm start" is not trusted: DAG greedy's is used instead.
  ProblemChoice cyclic;
  cyclic.pick = {0, 2, 4};
  auto from_cyclic = SolveIlp(p, absl::Seconds(10), &cyclic);
  ASSERT_TRUE(from_cyclic.ok()) << from_cyclic.status();
  EXPECT_TRUE(IsAcyclicChoice(p, from_cyclic->pick));
  EXPECT_DOUBLE_EQ(from_cyclic->cost_ms, 6.0);
}

TEST_F(EqsatTest, ExtractionProblemsRoundTripThroughTheirTextFormat) {
  const Graph host = SharedInputMatMulHost();
  MergedMatMuls m = BuildMergedMatMuls(host);
  CostModel cost(client_.get());
  auto costs = ENodeCosts(m.g.egraph, cost);
  ASSERT_TRUE(costs.ok()) << costs.status();
  const ExtractionProblem p = MakeExtractionProblem(m.g.egraph, m.g.outputs, *costs, /*labels=*/true);
  ASSERT_EQ(p.node_label.size(), p.node_id.size());
  const std::string path = ::testing::TempDir() + "/problem.txt";
  ASSERT_TRUE(WriteExtractionProblem(p, path).ok());
  auto read = ReadExtractionProblem(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->class_id, p.class_id);
  EXPECT_EQ(read->class_nodes, p.class_nodes);
  EXPECT_EQ(read->node_id, p.node_id);
  EXPECT_EQ(read->node_class, p.node_class);
  EXPECT_EQ(read->node_cost, p.node_cost);
  EXPECT_EQ(read->node_children, p.node_children);
  EXPECT_EQ(read->roots, p.roots);
  EXPECT_EQ(read->node_label, p.node_label);
  auto from_file = SolveIlp(*read, absl::Seconds(10), nullptr);
  auto direct = ExtractIlp(m.g.egraph, m.g.outputs, *costs, absl::Seconds(10));
  ASSERT_TRUE(from_file.ok() && direct.ok());
  EXPECT_NEAR(from_file->cost_ms, direct->cost_ms, 1e-9);
  EXPECT_FALSE(ReadExtractionProblem(path + ".missing").ok());
}

TEST_F(EqsatTest, ARewriteThatWouldCreateACycleIsFiltered) {
  const std::vector<RewriteRule> rules = {BothWays(RowsMatMuls()).front()};
  const Graph host = RowsMatMulCycleHost();
  CostModel cost(client_.get());
  auto result = EqsatSearch(host, rules, cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.rules_applied.count("rows"), 0u);
  EXPECT_GE(result->report.rejected, 2);  // both orders of the pair
  EXPECT_EQ(result->report.stop_reason, SearchStop::kSaturated);
  EXPECT_TRUE(result->best.TopologicalOrder().ok());
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatTest, LimitsStopTheSearchWithTheirReason) {
  const Graph host = ConvRelu();
  CostModel cost(client_.get());
  const std::vector<RewriteRule> rules = StructuralRewrites(host);
  // Runs with `options` expecting that stop; the result is still equivalent.
  auto stopped_by = [&](const EqsatOptions& options, SearchStop stop, const std::string& detail) {
    auto result = EqsatSearch(host, rules, cost, options);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return EqsatResult{};
    EXPECT_EQ(result->report.stop_reason, stop) << detail;
    EXPECT_EQ(result->report.stop_detail, detail);
    ExpectEquivalent(host, result->best);
    return *std::move(result);
  };
  EqsatOptions tiny_nodes;
  tiny_nodes.node_limit = 2;
  stopped_by(tiny_nodes, SearchStop::kNodeLimit, "node limit 2");
  EqsatOptions no_time;
  no_time.time_limit = absl::ZeroDuration();
  EXPECT_EQ(stopped_by(no_time, SearchStop::kTimeLimit, "time limit 0").iterations, 0);
  EqsatOptions one_round;
  one_round.iteration_limit = 1;
  EXPECT_EQ(stopped_by(one_round, SearchStop::kIterationLimit, "iteration limit 1").best.num_ops(), 1);
}

// Commutativity and associativity of addition, both ways: rules that match
// ever more places as they apply.
std::vector<RewriteRule> ProlificAddRules() {
  Graph cs, ct;
  TensorRef p = cs.AddInput("p", F32({2, 3})), q = cs.AddInput("q", F32({2, 3}));
  cs.AddOutput("s", *cs.AddOp1(OpKind::kEwAdd, {}, {p, q}));
  TensorRef tp = ct.AddInput("p", F32({2, 3})), tq = ct.AddInput("q", F32({2, 3}));
  ct.AddOutput("s", *ct.AddOp1(OpKind::kEwAdd, {}, {tq, tp}));
  Graph as, at;
  TensorRef a = as.AddInput("a", F32({2, 3})), b = as.AddInput("b", F32({2, 3})), c = as.AddInput("c", F32({2, 3}));
  as.AddOutput("s", *as.AddOp1(OpKind::kEwAdd, {}, {*as.AddOp1(OpKind::kEwAdd, {}, {a, b}), c}));
  TensorRef ta = at.AddInput("a", F32({2, 3})), tb = at.AddInput("b", F32({2, 3})), tc = at.AddInput("c", F32({2, 3}));
  at.AddOutput("s", *at.AddOp1(OpKind::kEwAdd, {}, {ta, *at.AddOp1(OpKind::kEwAdd, {}, {tb, tc})}));
  std::vector<RewriteRule> rules = {Forward(MakeRule("comm", cs, ct))};
  for (RewriteRule& r : BothWays(MakeRule("assoc", as, at))) rules.push_back(std::move(r));
  return rules;
}

// Two matmuls sharing an input (what mm2 merges) summed with six more terms.
Graph MatMulsInALongSum() {
  Graph host;
  TensorRef x = host.AddInput("x", F32({2, 4}));
  TensorRef w1 = host.AddWeight("w1", F32({4, 3})), w2 = host.AddWeight("w2", F32({4, 3}));
  TensorRef sum = *host.AddOp1(OpKind::kEwAdd, {}, {*host.AddOp1(OpKind::kMatMul, {}, {x, w1}),
                                                      *host.AddOp1(OpKind::kMatMul, {}, {x, w2})});
  for (int i = 0; i < 6; ++i) {
    sum = *host.AddOp1(OpKind::kEwAdd, {}, {sum, host.AddInput(absl::StrCat("e", i), F32({2, 3}))});
  }
  host.AddOutput("s", sum);
  return host;
}

TEST_F(EqsatTest, BackoffKeepsProlificRulesFromFillingTheEGraph) {
  const Graph host = MatMulsInALongSum();
  std::vector<RewriteRule> rules = ProlificAddRules();
  for (RewriteRule& r : BothWays(SharedInputMatMuls())) rules.push_back(std::move(r));
  EqsatOptions options;
  options.node_limit = 5000;
  options.iteration_limit = 12;
  options.max_matches_per_rule = 16;
  options.backoff_ban_length = 2;
  auto scheduled = Saturate(host, rules, options);
  ASSERT_TRUE(scheduled.ok()) << scheduled.status();
  EXPECT_NE(scheduled->stop_reason, SearchStop::kNodeLimit) << scheduled->stop_detail;
  EXPECT_LE(scheduled->egraph.num_enodes(), options.node_limit);
  EXPECT_GT(scheduled->rule_bans, 0);
  EXPECT_GE(scheduled->rules_applied.count("mm2"), 1u);
  // The same rules, every match applied each round (the cap doubling as before).
  options.backoff_scheduler = false;
  auto unscheduled = Saturate(host, rules, options);
  ASSERT_TRUE(unscheduled.ok()) << unscheduled.status();
  EXPECT_EQ(unscheduled->stop_reason, SearchStop::kNodeLimit) << unscheduled->stop_detail;
  EXPECT_EQ(unscheduled->rule_bans, 0);
  std::cerr << "scheduled: " << scheduled->stop_detail << " after " << scheduled->iterations << " rounds, "
            << scheduled->egraph.num_enodes() << " e-nodes, " << scheduled->rule_bans << " bans; unscheduled: "
            << unscheduled->stop_detail << " after " << unscheduled->iterations << " rounds\n";
}

// Rules that keep within their match limit but would fill the e-graph's
// room are held back (banned) before the node limit, the rules that match
// few places (the matmul merge) applied first.
TEST_F(EqsatTest, ARuleWithoutRoomIsBannedBeforeTheNodeLimit) {
  const Graph host = MatMulsInALongSum();
  std::vector<RewriteRule> rules = ProlificAddRules();
  for (RewriteRule& r : BothWays(SharedInputMatMuls())) rules.push_back(std::move(r));
  EqsatOptions options;
  options.node_limit = 600;
  options.iteration_limit = 30;
  options.max_matches_per_rule = 1000000;  // never over its limit: only room bans
  auto sat = Saturate(host, rules, options);
  ASSERT_TRUE(sat.ok()) << sat.status();
  EXPECT_LE(sat->egraph.num_enodes(), options.node_limit) << sat->stop_detail;
  EXPECT_GT(sat->activity["assoc"].bans + sat->activity["comm"].bans, 0) << MostProlificRules(*sat, 4);
  EXPECT_EQ(sat->activity["mm2"].bans, 0);
  EXPECT_GE(sat->rules_applied.count("mm2"), 1u);
  std::cerr << sat->stop_detail << " after " << sat->iterations << " rounds, " << sat->egraph.num_enodes()
            << " e-nodes: " << MostProlificRules(*sat, 4) << "\n";
}

// A round's room is kept even where the rules' past e-nodes per application
// underestimate what their matches add (seen on an unrolled RNN cell with
// the size-3 rules: 9,424 e-nodes added in a round whose room was 6,024, and
// the next round stopped at the node limit): the limit ends saturation only
// when no rule's matches fit at all ("no room"), never by overshooting.
TEST_F(EqsatTest, ARoundNeverAddsMoreThanItsRoom) {
  Graph host = MatMulsInALongSum();
  std::vector<RewriteRule> rules = ProlificAddRules();
  for (RewriteRule& r : BothWays(SharedInputMatMuls())) rules.push_back(std::move(r));
  int overshoots = 0;
  for (int limit : {150, 435, 1200}) {
    EqsatOptions options;
    options.node_limit = limit;
    options.iteration_limit = 40;
    options.max_matches_per_rule = 1000000;  // only room holds rules back
    auto sat = Saturate(host, rules, options);
    ASSERT_TRUE(sat.ok()) << sat.status();
    EXPECT_LE(sat->egraph.num_enodes(), limit) << sat->stop_detail;
    if (sat->stop_reason == SearchStop::kNodeLimit &&
        sat->stop_detail == absl::StrCat("node limit ", limit)) {
      ++overshoots;
      ADD_FAILURE() << "limit " << limit << ": a round overshot its room to " << sat->egraph.num_enodes()
                    << " e-nodes (" << MostProlificRules(*sat, 3) << ")";
    }
  }
  EXPECT_EQ(overshoots, 0);
}

TEST_F(EqsatTest, GreedyExtractionWhenTheIlpIsOff) {
  const Graph host = ConvRelu();
  CostModel cost(client_.get());
  EqsatOptions options;
  options.use_ilp = false;
  auto result = EqsatSearch(host, StructuralRewrites(host), cost, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->report.extraction_detail, ::testing::StartsWith("greedy"));
  EXPECT_EQ(result->best.num_ops(), 1);
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatTest, SplitsInTheInputRoundTripThroughTupleClasses) {
  // split(matmul(x, concat(p, q))) and the backward rule that undoes the merge.
  Graph host;
  TensorRef x = host.AddInput("x", F32({8, 16}));
  TensorRef p = host.AddWeight("p", F32({16, 8})), q = host.AddWeight("q", F32({16, 8}));
  OpParams axis1;
  axis1.axis = 1;
  TensorRef cat = *host.AddOp1(OpKind::kConcat, axis1, {p, q});
  auto parts = *host.AddOp(OpKind::kSplit, axis1, {*host.AddOp1(OpKind::kMatMul, {}, {x, cat})});
  host.AddOutput("a", *host.AddOp1(OpKind::kRelu, {}, {parts[0]}));
  host.AddOutput("b", parts[1]);
  CostModel cost(client_.get());
  auto unchanged = EqsatSearch(host, {}, cost);
  ASSERT_TRUE(unchanged.ok()) << unchanged.status();
  EXPECT_EQ(unchanged->report.stop_reason, SearchStop::kSaturated);
  EXPECT_DOUBLE_EQ(unchanged->report.best_cost_ms, unchanged->report.initial_cost_ms);
  ExpectEquivalent(host, unchanged->best);
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(result->report.rules_applied.count("mm2~"), 1u);
  EXPECT_LE(result->report.best_cost_ms, result->report.initial_cost_ms);
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatTest, RecurrentCellsMergeTheirMatMuls) {
  // Two NasRNN-like steps: three branches matmul(x, Wa) + matmul(h, Wb) each.
  Graph g;
  const int64_t hidden = 64;
  TensorRef h = g.AddWeight("h0", F32({1, hidden}));
  for (int step = 0; step < 2; ++step) {
    TensorRef x = g.AddInput(absl::StrCat("x", step), F32({1, hidden}));
    std::vector<TensorRef> branches;
    for (int k = 0; k < 3; ++k) {
      TensorRef wa = g.AddWeight(absl::StrCat("wa", step, "_", k), F32({hidden, hidden}));
      TensorRef wb = g.AddWeight(absl::StrCat("wb", step, "_", k), F32({hidden, hidden}));
      branches.push_back(*g.AddOp1(OpKind::kEwAdd, {}, {*g.AddOp1(OpKind::kMatMul, {}, {x, wa}),
                                                        *g.AddOp1(OpKind::kMatMul, {}, {h, wb})}));
    }
    TensorRef left = *g.AddOp1(OpKind::kEwMul, {}, {*g.AddOp1(OpKind::kSigmoid, {}, {branches[0]}),
                                                    *g.AddOp1(OpKind::kTanh, {}, {branches[1]})});
    TensorRef right = *g.AddOp1(OpKind::kRelu, {}, {branches[2]});
    h = *g.AddOp1(OpKind::kTanh, {}, {*g.AddOp1(OpKind::kEwAdd, {}, {left, right})});
  }
  g.AddOutput("h", h);
  // No commutativity law: the e-graph holds a sum in either order as one
  // e-node, so mm2 finds the matmuls to merge whichever order they are summed.
  const std::vector<RewriteRule> rules = BothWays(SharedInputMatMuls());
  CostModel cost(client_.get());
  auto result = EqsatSearch(g, rules, cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(result->report.best_cost_ms, result->report.initial_cost_ms);
  EXPECT_LT(CountOps(result->best, OpKind::kMatMul), CountOps(g, OpKind::kMatMul));
  EXPECT_GE(result->report.rules_applied.count("mm2"), 1u);
  EXPECT_THAT(result->report.extraction_detail, ::testing::StartsWith("ilp optimal"));
  ExpectEquivalent(g, result->best);
}

}  // namespace
}  // namespace taso::optimizer
