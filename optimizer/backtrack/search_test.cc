// Matching, applying and searching with rewrites: every rewrite the search
// keeps is checked here against the float interpreter, and the searches are
// run with a real in-process profiler (the analytic backend, so the costs are
// deterministic).
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gtest/gtest.h"
#include "optimizer/rewrite/apply.h"
#include "optimizer/backtrack/backtrack.h"
#include "optimizer/passes/epilogue_fusion.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/passes/structural_rules.h"
#include "optimizer/rewrite/test_util.h"
#include "costs/client.h"

namespace taso::optimizer {
namespace {

using testing::ConvRelu;
using testing::ExpectEquivalent;
using testing::F32;
using testing::Forward;
using testing::MakeRule;
using testing::RowsMatMulCycleHost;
using testing::RowsMatMuls;
using testing::SharedInputMatMulHost;
using testing::SharedInputMatMuls;

// Convolution parameters: `pad` on every side, explicitly, and `stride`.
OpParams ExplicitConv(int pad, int stride) {
  OpParams p;
  p.padding = Padding::kExplicit;
  p.pads = {pad, pad, pad, pad};
  p.stride_h = p.stride_w = stride;
  return p;
}

TEST(RewriteTest, FusionMatchesAndPreservesValues) {
  const Graph host = ConvRelu(false);
  std::vector<RewriteRule> fusions = StructuralRewrites(host);
  ASSERT_EQ(fusions.size(), 1u);
  const GraphIndex index(host);
  std::vector<Match> matches = FindMatches(fusions[0], index);
  ASSERT_EQ(matches.size(), 1u);
  auto fused = ApplyRewrite(host, fusions[0], matches[0]);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->num_ops(), 1);
  ExpectEquivalent(host, *fused);
}

TEST(RewriteTest, AValueReadOutsideThePatternBlocksTheMatch) {
  const Graph host = ConvRelu(true);
  std::vector<RewriteRule> fusions = StructuralRewrites(host);
  ASSERT_EQ(fusions.size(), 1u);
  EXPECT_TRUE(FindMatches(fusions[0], GraphIndex(host)).empty());
}

TEST(RewriteTest, MultiOutputRuleAtOtherShapes) {
  // The rule was stated on 2x4 inputs; it applies to any shapes that infer.
  Graph host;
  TensorRef x = host.AddInput("x", F32({5, 16}));
  TensorRef w1 = host.AddWeight("p", F32({16, 8})), w2 = host.AddWeight("q", F32({16, 32}));
  TensorRef a = *host.AddOp1(OpKind::kMatMul, {}, {x, w1});
  TensorRef b = *host.AddOp1(OpKind::kMatMul, {}, {x, w2});
  host.AddOutput("sum_a", *host.AddOp1(OpKind::kRelu, {}, {a}));
  host.AddOutput("b", b);
  const RewriteRule rule = Forward(SharedInputMatMuls());
  std::vector<Match> matches = FindMatches(rule, GraphIndex(host));
  ASSERT_FALSE(matches.empty());
  auto merged = ApplyRewrite(host, rule, matches[0]);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->type(merged->outputs()[1].tensor).dims, (std::vector<int64_t>{5, 32}));
  ExpectEquivalent(host, *merged);
  // And back: the backward direction splits it again.
  auto both = RewritesFromRule(SharedInputMatMuls());
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[1].name, "mm2~");
}

TEST(RewriteTest, WeightVariablesOnlyBindConstants) {
  Graph host;
  TensorRef x = host.AddInput("x", F32({2, 4}));
  TensorRef w1 = host.AddInput("not_a_weight", F32({4, 3})), w2 = host.AddWeight("w2", F32({4, 3}));
  host.AddOutput("a", *host.AddOp1(OpKind::kMatMul, {}, {x, w1}));
  host.AddOutput("b", *host.AddOp1(OpKind::kMatMul, {}, {x, w2}));
  EXPECT_TRUE(FindMatches(Forward(SharedInputMatMuls()), GraphIndex(host)).empty());
}

TEST(RewriteTest, ARewriteThatWouldCreateACycleIsRejected) {
  const RewriteRule rule = Forward(RowsMatMuls());
  const Graph host = RowsMatMulCycleHost();
  std::vector<Match> matches = FindMatches(rule, GraphIndex(host));
  int applied = 0;
  for (const Match& m : matches) {
    auto r = ApplyRewrite(host, rule, m);
    if (r.ok()) {
      ++applied;
      ExpectEquivalent(host, *r);
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
    }
  }
  EXPECT_EQ(applied, 0) << "every match of this host would be cyclic";
}

TEST(RewriteTest, ConvolutionsWithDifferentKernelsMergeWhereTheirWindowsLineUp) {
  // ResNet-style: a 1x1 projection (no padding) and a 3x3 (pads 1), both
  // stride 2, on an even input: SAME could express neither.
  Graph host;
  TensorRef x = host.AddInput("x", F32({1, 4, 8, 8}));
  const OpParams one = ExplicitConv(0, 2);
  const OpParams three = ExplicitConv(1, 2);
  TensorRef a = *host.AddOp1(OpKind::kConv2D, one, {x, host.AddWeight("p", F32({6, 4, 1, 1}))});
  TensorRef b = *host.AddOp1(OpKind::kConv2D, three, {x, host.AddWeight("q", F32({5, 4, 3, 3}))});
  host.AddOutput("a", a);
  host.AddOutput("b", b);
  std::vector<RewriteRule> rules = StructuralRewrites(host);
  int applied = 0;
  for (const RewriteRule& rule : rules) {
    if (rule.name.rfind("merge:conv1x1+conv3x3", 0) != 0) continue;
    for (const Match& m : FindMatches(rule, GraphIndex(host))) {
      auto merged = ApplyRewrite(host, rule, m);
      ASSERT_TRUE(merged.ok()) << merged.status();
      EXPECT_EQ(merged->num_ops(), 4);  // enlarge, concat, conv, split
      ExpectEquivalent(host, *merged);
      ++applied;
    }
  }
  EXPECT_EQ(applied, 1);
  // Windows that do not line up (the 3x3 unpadded) give no merge rule.
  Graph off;
  TensorRef y = off.AddInput("x", F32({1, 4, 9, 9}));
  OpParams valid3 = one;  // 3x3 without padding: 9 -> 4, 1x1 stride 2: 9 -> 5
  off.AddOutput("a", *off.AddOp1(OpKind::kConv2D, one, {y, off.AddWeight("p", F32({6, 4, 1, 1}))}));
  off.AddOutput("b", *off.AddOp1(OpKind::kConv2D, valid3, {y, off.AddWeight("q", F32({5, 4, 3, 3}))}));
  for (const RewriteRule& rule : StructuralRewrites(off)) EXPECT_EQ(rule.name.rfind("merge:", 0), std::string::npos);
}

// relu(conv(x, w) + reshape(b -> [6,1,1])), as ONNX import gives a Conv with a
// bias followed by a Relu; `bias_first` puts the bias on the left of the add.
Graph ConvBiasRelu(bool bias_first = false, bool b_is_weight = true) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 4, 8, 8}));
  TensorRef w = g.AddWeight("w", F32({6, 4, 3, 3}));
  TensorRef b = b_is_weight ? g.AddWeight("b", F32({6})) : g.AddInput("b", F32({6}));
  OpParams p;
  p.padding = Padding::kExplicit;
  p.pads = {1, 1, 1, 1};
  TensorRef c = *g.AddOp1(OpKind::kConv2D, p, {x, w});
  OpParams shape;
  shape.shape = {6, 1, 1};
  TensorRef b3 = *g.AddOp1(OpKind::kReshape, shape, {b});
  TensorRef sum = bias_first ? *g.AddOp1(OpKind::kEwAdd, {}, {b3, c}) : *g.AddOp1(OpKind::kEwAdd, {}, {c, b3});
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {sum}));
  return g;
}

// The single conv2d of `g`, which must read a bias and apply `act`.
void ExpectOneFusedConv(const Graph& g, Activation act) {
  int convs = 0;
  for (const Node& n : g.nodes()) {
    EXPECT_NE(n.kind, OpKind::kEwAdd) << "the bias add is left";
    EXPECT_NE(n.kind, OpKind::kRelu) << "the activation is left";
    if (n.kind != OpKind::kConv2D) continue;
    ++convs;
    EXPECT_EQ(n.inputs.size(), 3u);
    EXPECT_EQ(n.params.activation, act);
  }
  EXPECT_EQ(convs, 1);
}

TEST(RewriteTest, BiasAndActivationFuseIntoTheConvolution) {
  for (bool bias_first : {false, true}) {
    SCOPED_TRACE(bias_first ? "bias + conv" : "conv + bias");
    Graph g = ConvBiasRelu(bias_first);
    // The bias fusion, then the activation fusion it enables.
    std::vector<RewriteRule> rules = FusionRewrites(g);
    ASSERT_EQ(rules.size(), 2u);
    for (const RewriteRule& rule : rules) {
      std::vector<Match> matches = FindMatches(rule, GraphIndex(g));
      if (matches.empty()) continue;
      auto next = ApplyRewrite(g, rule, matches[0]);
      ASSERT_TRUE(next.ok()) << next.status();
      ExpectEquivalent(ConvBiasRelu(bias_first), *next);
      g = std::move(*next);
    }
    ExpectOneFusedConv(g, Activation::kRelu);
  }
}

TEST(RewriteTest, ANonConstantBiasDoesNotFuse) {
  const Graph g = ConvBiasRelu(false, /*b_is_weight=*/false);
  int bias_rules = 0;
  for (const RewriteRule& rule : FusionRewrites(g)) {
    if (rule.name.rfind("fuse:conv2d+bias[", 0) != 0) continue;
    ++bias_rules;
    EXPECT_TRUE(FindMatches(rule, GraphIndex(g)).empty());
  }
  EXPECT_EQ(bias_rules, 1);
}

TEST(RewriteTest, ConvolutionsWithBiasesMerge) {
  // Two 1x1 convolutions of one input, each with a bias add, as ResNet's
  // projection and first bottleneck convolution after batch-norm folding.
  Graph host;
  TensorRef x = host.AddInput("x", F32({1, 4, 8, 8}));
  for (const char* name : {"a", "b"}) {
    TensorRef c = *host.AddOp1(OpKind::kConv2D, {}, {x, host.AddWeight(absl::StrCat(name, "_w"), F32({6, 4, 1, 1}))});
    host.AddOutput(name, *host.AddOp1(OpKind::kEwAdd, {}, {c, host.AddWeight(absl::StrCat(name, "_b"), F32({6, 1, 1}))}));
  }
  Graph g = host;
  // Fuse both biases, then merge the biased convolutions.
  for (int round = 0; round < 2; ++round) {
    for (const RewriteRule& rule : FusionRewrites(g)) {
      auto matches = FindMatches(rule, GraphIndex(g));
      if (!matches.empty()) g = *ApplyRewrite(g, rule, matches[0]);
    }
  }
  int merged = 0;
  for (const RewriteRule& rule : StructuralRewrites(host)) {
    if (rule.name.rfind("merge:conv1x1+conv1x1+bias", 0) != 0) continue;
    for (const Match& m : FindMatches(rule, GraphIndex(g))) {
      auto next = ApplyRewrite(g, rule, m);
      ASSERT_TRUE(next.ok()) << next.status();
      ExpectEquivalent(host, *next);
      ++merged;
    }
  }
  EXPECT_GT(merged, 0) << "no merge rule for the biased form";
}

TEST(RewriteTest, GroupedConvolutionsMergeIntoFewerGroups) {
  // Four groups of two channels, strided and padded, then a bias add.
  Graph host;
  TensorRef x = host.AddInput("x", F32({1, 8, 7, 7}));
  OpParams p = ExplicitConv(1, 2);
  TensorRef c = *host.AddOp1(OpKind::kConv2D, p, {x, host.AddWeight("w", F32({8, 2, 3, 3}))});
  host.AddOutput("y", *host.AddOp1(OpKind::kEwAdd, {}, {c, host.AddWeight("b", F32({8, 1, 1}))}));
  std::set<std::string> seen;
  for (const RewriteRule& rule : StructuralRewrites(host)) {
    if (rule.name.rfind("merge:gconv", 0) != 0) continue;
    seen.insert(rule.name.substr(0, rule.name.find('[')));
    for (const Match& m : FindMatches(rule, GraphIndex(host))) {
      auto merged = ApplyRewrite(host, rule, m);
      ASSERT_TRUE(merged.ok()) << merged.status();
      ExpectEquivalent(host, *merged);
    }
  }
  // 4 -> 2 and 4 -> 1, for the conv as it is and with its bias fused.
  EXPECT_EQ(seen, (std::set<std::string>{"merge:gconv4->2", "merge:gconv4->1", "merge:gconv4->2+bias",
                                         "merge:gconv4->1+bias"}));
}

class SearchTest : public testing::AnalyticProfilerTest {};

TEST_F(SearchTest, BacktrackingFindsConvReluFusion) {
  const Graph host = ConvRelu(false);
  CostModel cost(client_.get());
  auto result = BacktrackSearch(host, StructuralRewrites(host), cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(result->report.best_cost_ms, result->report.initial_cost_ms);
  EXPECT_EQ(result->best.num_ops(), 1);
  ASSERT_EQ(result->report.rules_applied.size(), 1u);
  EXPECT_NE(result->report.rules_applied.begin()->first.find("fuse:conv2d+relu"), std::string::npos);
  EXPECT_EQ(result->report.stop_reason, SearchStop::kQueueExhausted);
  EXPECT_FALSE(result->report.stop_detail.empty());
  ExpectEquivalent(host, result->best);
}

TEST_F(SearchTest, BacktrackingFusesBiasAndActivation) {
  const Graph host = ConvBiasRelu();
  CostModel cost(client_.get());
  auto result = BacktrackSearch(host, StructuralRewrites(host), cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_LT(result->report.best_cost_ms, result->report.initial_cost_ms);
  ExpectOneFusedConv(result->best, Activation::kRelu);
  ExpectEquivalent(host, result->best);
}

TEST_F(SearchTest, EpilogueFusionFinishesWhatTheSearchLeft) {
  const Graph host = ConvBiasRelu(/*bias_first=*/true);
  CostModel cost(client_.get());
  auto fused = FuseEpilogues(host, cost);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->changed, 2);
  ExpectOneFusedConv(fused->graph, Activation::kRelu);
  ExpectEquivalent(host, fused->graph);
  auto before = cost.GraphCost(host), after = cost.GraphCost(fused->graph);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_LT(*after, *before);
  // Nothing left to fuse: unchanged.
  auto again = FuseEpilogues(fused->graph, cost);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->changed, 0);
}

TEST_F(SearchTest, BacktrackingMergesMatMulsThatShareAnInput) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  auto rules = RewritesFromRule(SharedInputMatMuls());
  ASSERT_TRUE(rules.ok());
  auto result = BacktrackSearch(host, *rules, cost);
  ASSERT_TRUE(result.ok()) << result.status();
  // One launch instead of two; the concat of weights is folded (costs 0).
  EXPECT_LT(result->report.best_cost_ms, result->report.initial_cost_ms);
  EXPECT_EQ(result->report.rules_applied.count("mm2"), 1u);
  ExpectEquivalent(host, result->best);
  EXPECT_GE(cost.requests(), 1);
}

// The analytic profiler's costs with a weight term added to its graph cost
// model (a stand-in for the cpu and ort backends' calibrated terms).
class WithWeightTerm : public testing::ForwardingProfiler {
 public:
  WithWeightTerm(profiler::ProfilerClient* inner, profiler::GraphCostModel model)
      : ForwardingProfiler(inner), model_(std::move(model)) {}
  absl::StatusOr<profiler::MeasureResponse> MeasureBatch(const profiler::MeasureRequest& request) override {
    auto r = inner().MeasureBatch(request);
    if (r.ok()) *r->mutable_graph_cost_model() = model_;
    return r;
  }
  std::string Describe() const override { return "analytic with a weight term"; }

 private:
  profiler::GraphCostModel model_;
};

// Two steps of a cell read one input each through the same two weights.
// Merging one step's matmuls leaves the originals (the other step reads
// them) beside their concatenation: twice the weights, which the weight term
// below charges 10 ms/MB. Merging both steps reads the concatenation alone.
TEST_F(SearchTest, BacktrackingPassesThroughGraphsThatReadMoreWeightsOnTheWayToOneThatDoesNot) {
  Graph host;
  TensorRef wa = host.AddWeight("wa", F32({64, 64})), wb = host.AddWeight("wb", F32({64, 64}));
  for (int t = 0; t < 2; ++t) {
    TensorRef x = host.AddInput(absl::StrCat("x", t), F32({1, 64}));
    host.AddOutput(absl::StrCat("a", t), *host.AddOp1(OpKind::kMatMul, {}, {x, wa}));
    host.AddOutput(absl::StrCat("b", t), *host.AddOp1(OpKind::kMatMul, {}, {x, wb}));
  }
  ASSERT_TRUE(host.Validate().ok());
  profiler::GraphCostModel model;
  model.set_weight_stream_mb_ms(10);
  model.set_weight_cache_bytes(2 * 64 * 64 * 4 * 2);  // the input's weights are half of it
  for (auto [fraction, paid] : std::vector<std::pair<double, double>>{{0.5, 0}, {1, 1}}) {
    model.add_weight_spill_fraction(fraction);
    model.add_weight_spill_paid(paid);
  }
  WithWeightTerm client(client_.get(), model);
  CostModel cost(&client);
  auto rules = RewritesFromRule(SharedInputMatMuls());
  ASSERT_TRUE(rules.ok());
  // One step merged: its whole cost is far past alpha x the input's.
  auto one = ApplyRewrite(host, Forward(SharedInputMatMuls()),
                          FindMatches(Forward(SharedInputMatMuls()), GraphIndex(host))[0]);
  ASSERT_TRUE(one.ok()) << one.status();
  auto one_cost = cost.GraphCostInParts(*one);
  auto host_cost = cost.GraphCostInParts(host);
  ASSERT_TRUE(one_cost.ok() && host_cost.ok());
  EXPECT_GT(one_cost->total_ms(), 1.05 * host_cost->total_ms());
  EXPECT_LT(one_cost->operators_ms, host_cost->operators_ms);
  auto result = BacktrackSearch(host, *rules, cost);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.rules_applied["mm2"], 2) << "both steps merged";
  EXPECT_LT(result->report.best_cost_ms, host_cost->total_ms());
  auto best = cost.GraphCostInParts(result->best);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->weights_ms, 0);  // one concatenation, as many weights as the input
  ExpectEquivalent(host, result->best);
}

}  // namespace
}  // namespace taso::optimizer
