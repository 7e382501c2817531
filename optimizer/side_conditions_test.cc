// A proved rule fires only where its proof holds. The rule here is the
// channel-concat law, cat_1(conv(x,y), conv(x,z)) = conv(x, cat_0(y,z)),
// which Z3 proves for dense convolutions only: on a depthwise or grouped
// convolution the merged weight would hand each group the wrong filters, yet
// kinds, parameters and shapes all fit. Both searches must leave those alone
// and still merge dense convolutions.
#include <cmath>

#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gtest/gtest.h"
#include "optimizer/rewrite/apply.h"
#include "optimizer/backtrack/backtrack.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/rewrite/match.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using testing::ExpectEquivalent;
using testing::F32;
using testing::Forward;
using testing::MakeRule;

// The law as the generator states it: on dense 4-channel convolutions; with
// `open` the halves' equality left open, as the verifier records it when the
// proof goes through that way (verifier/prover_test).
rules::Rule ChannelConcat(OpenFacts open = OpenFacts::kNone) {
  Graph s, t;
  OpParams axis1;
  axis1.axis = 1;
  OpParams axis0;
  axis0.axis = 0;
  TensorRef x = s.AddInput("x", F32({1, 4, 6, 6}));
  TensorRef y = s.AddWeight("w1", F32({4, 4, 3, 3})), z = s.AddWeight("w2", F32({4, 4, 3, 3}));
  s.AddOutput("out", *s.AddOp1(OpKind::kConcat, axis1, {*s.AddOp1(OpKind::kConv2D, {}, {x, y}),
                                                        *s.AddOp1(OpKind::kConv2D, {}, {x, z})}));
  TensorRef tx = t.AddInput("x", F32({1, 4, 6, 6}));
  TensorRef ty = t.AddWeight("w1", F32({4, 4, 3, 3})), tz = t.AddWeight("w2", F32({4, 4, 3, 3}));
  t.AddOutput("out", *t.AddOp1(OpKind::kConv2D, {}, {tx, *t.AddOp1(OpKind::kConcat, axis0, {ty, tz})}));
  return MakeRule("cc", s, t, open);
}


// Two convolutions of x concatenated on channels; `per_group` input channels
// per group of 16 (16: dense, 1: depthwise); the second has `second_outputs`
// output channels.
Graph TwoConvsConcatenated(int64_t per_group, int64_t second_outputs = 16) {
  Graph g;
  OpParams axis1;
  axis1.axis = 1;
  TensorRef x = g.AddInput("x", F32({1, 16, 10, 10}));
  TensorRef w1 = g.AddWeight("a", F32({16, per_group, 3, 3}));
  TensorRef w2 = g.AddWeight("b", F32({second_outputs, per_group, 3, 3}));
  g.AddOutput("out", *g.AddOp1(OpKind::kConcat, axis1, {*g.AddOp1(OpKind::kConv2D, {}, {x, w1}),
                                                        *g.AddOp1(OpKind::kConv2D, {}, {x, w2})}));
  return g;
}

double MaxDifference(const Graph& a, const Graph& b) {
  auto feeds = DeterministicFloatFeeds(a, 7);
  auto out_a = EvaluateFloat(a, feeds);
  auto out_b = EvaluateFloat(b, feeds);
  EXPECT_TRUE(out_a.ok() && out_b.ok());
  double worst = 0;
  for (size_t i = 0; i < (*out_a)[0].data.size(); ++i) {
    worst = std::max(worst, std::abs(double{(*out_a)[0].data[i]} - (*out_b)[0].data[i]));
  }
  return worst;
}

int CountOps(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind ? 1 : 0;
  return n;
}

TEST(SideConditionsTest, WithoutItsConditionsTheRuleWouldMakeAWrongGraph) {
  // What the conditions prevent: kinds, parameters and shapes all fit a
  // depthwise host, and the result computes something else.
  RewriteRule unchecked = Forward(ChannelConcat());
  unchecked.SetConditions({}, {});
  const Graph host = TwoConvsConcatenated(1);
  std::vector<Match> matches = FindMatches(unchecked, GraphIndex(host));
  ASSERT_EQ(matches.size(), 1u);
  auto wrong = ApplyRewrite(host, unchecked, matches[0]);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_GT(MaxDifference(host, *wrong), 1e-2);
}

TEST(SideConditionsTest, ADenseOnlyRuleMatchesDenseConvolutionsOnly) {
  const RewriteRule rule = Forward(ChannelConcat());
  EXPECT_TRUE(FindMatches(rule, GraphIndex(TwoConvsConcatenated(1))).empty()) << "depthwise";
  EXPECT_TRUE(FindMatches(rule, GraphIndex(TwoConvsConcatenated(8))).empty()) << "two groups";
  const Graph dense = TwoConvsConcatenated(16);
  std::vector<Match> matches = FindMatches(rule, GraphIndex(dense));
  ASSERT_EQ(matches.size(), 1u);
  auto merged = ApplyRewrite(dense, rule, matches[0]);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(CountOps(*merged, OpKind::kConv2D), 1);
  ExpectEquivalent(dense, *merged);
}

TEST(SideConditionsTest, AReplacementThatLeavesTheProofIsRefused) {
  // The matched side fits, but the built replacement's convolution is not the
  // one the proof spoke of (here: conditions claiming two groups).
  RewriteRule rule = Forward(ChannelConcat());
  GraphConditions claimed = rule.rhs_conditions();
  for (auto& node : claimed) {
    for (ProofSignature& sig : node) {
      if (sig.name == "conv2d") sig.params.back() = 2;
    }
  }
  rule.SetConditions(rule.lhs_conditions(), claimed);
  const Graph dense = TwoConvsConcatenated(16);
  std::vector<Match> matches = FindMatches(rule, GraphIndex(dense));
  ASSERT_EQ(matches.size(), 1u);
  auto refused = ApplyRewrite(dense, rule, matches[0]);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("proof"), std::string::npos) << refused.status();
}

TEST(SideConditionsTest, RulesWithoutRecordedConditionsAreNotUsed) {
  rules::RuleCollection collection;
  *collection.add_rules() = ChannelConcat();
  rules::Rule bare = ChannelConcat();
  bare.set_id("bare");
  bare.clear_conditions();
  *collection.add_rules() = bare;
  auto set = RewritesFromCollection(collection);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->rewrites.size(), 2u);  // "cc" both ways
  EXPECT_EQ(set->unusable, 1);
  EXPECT_NE(set->first_unusable.find("bare"), std::string::npos) << set->first_unusable;
}

TEST(SideConditionsTest, OpenFactsApplyAtOtherValues) {
  // Proved with the halves' equality open, the law merges convolutions with
  // different output counts; recorded at equal halves only, it does not.
  const Graph uneven = TwoConvsConcatenated(16, 8);
  EXPECT_TRUE(FindMatches(Forward(ChannelConcat()), GraphIndex(uneven)).empty());
  const RewriteRule open = Forward(ChannelConcat(OpenFacts::kConcatHalves));
  std::vector<Match> matches = FindMatches(open, GraphIndex(uneven));
  ASSERT_EQ(matches.size(), 1u);
  auto merged = ApplyRewrite(uneven, open, matches[0]);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(CountOps(*merged, OpKind::kConv2D), 1);
  ExpectEquivalent(uneven, *merged);
  // Still dense only.
  EXPECT_TRUE(FindMatches(open, GraphIndex(TwoConvsConcatenated(8, 8))).empty());
}

TEST(SideConditionsTest, FactsTheProofKeptEqualMustBeEqual) {
  // cat(a,b) + cat(c,d) = cat(a+c, b+d): one equal-halves fact for both
  // concats. A host where one concat is even and the other is not binds the
  // fact two ways and is not a match.
  OpParams axis1;
  axis1.axis = 1;
  auto side = [&](Graph& g, const std::vector<std::vector<int64_t>>& dims, bool sum_of_concats) {
    TensorRef a = g.AddInput("a", F32(dims[0])), b = g.AddInput("b", F32(dims[1]));
    TensorRef c = g.AddInput("c", F32(dims[2])), d = g.AddInput("d", F32(dims[3]));
    if (sum_of_concats) {
      g.AddOutput("y", *g.AddOp1(OpKind::kEwAdd, {}, {*g.AddOp1(OpKind::kConcat, axis1, {a, b}),
                                                    *g.AddOp1(OpKind::kConcat, axis1, {c, d})}));
    } else {
      g.AddOutput("y", *g.AddOp1(OpKind::kConcat, axis1, {*g.AddOp1(OpKind::kEwAdd, {}, {a, c}),
                                                          *g.AddOp1(OpKind::kEwAdd, {}, {b, d})}));
    }
  };
  Graph s, t;
  side(s, {{1, 3}, {1, 3}, {1, 3}, {1, 3}}, true);
  side(t, {{1, 3}, {1, 3}, {1, 3}, {1, 3}}, false);
  const RewriteRule rule = Forward(MakeRule("cat_add", s, t, OpenFacts::kConcatHalves));
  Graph even, mixed;
  side(even, {{1, 5}, {1, 5}, {1, 5}, {1, 5}}, true);
  side(mixed, {{1, 2}, {1, 4}, {1, 3}, {1, 3}}, true);
  EXPECT_EQ(FindMatches(rule, GraphIndex(even)).size(), 1u);
  EXPECT_TRUE(FindMatches(rule, GraphIndex(mixed)).empty());
  // Each concat alone fits the recorded signature; only the binding tells.
  RewriteRule unbound = rule;
  GraphConditions open = unbound.lhs_conditions();
  for (auto& node : open) {
    for (ProofSignature& sig : node) {
      if (sig.name == "concat") sig.params[1] = FactVariable(static_cast<int>(&node - &open[0]));
    }
  }
  unbound.SetConditions(open, unbound.rhs_conditions());
  EXPECT_EQ(FindMatches(unbound, GraphIndex(mixed)).size(), 1u);
}

class SideConditionsSearchTest : public testing::AnalyticProfilerTest {};

TEST_F(SideConditionsSearchTest, BothSearchesLeaveGroupedConvolutionsAloneAndMergeDenseOnes) {
  auto both = RewritesFromRule(ChannelConcat());
  ASSERT_TRUE(both.ok()) << both.status();
  for (const int64_t per_group : {1, 8, 16}) {
    SCOPED_TRACE(::testing::Message() << per_group << " input channels per group");
    const Graph host = TwoConvsConcatenated(per_group);
    const bool dense = per_group == 16;
    CostModel cost(client_.get());
    auto backtrack = BacktrackSearch(host, *both, cost);
    ASSERT_TRUE(backtrack.ok()) << backtrack.status();
    EXPECT_EQ(backtrack->report.rules_applied.count("cc"), dense ? 1u : 0u);
    EXPECT_EQ(CountOps(backtrack->best, OpKind::kConv2D), dense ? 1 : 2);
    ExpectEquivalent(host, backtrack->best);
    auto eqsat = EqsatSearch(host, *both, cost);
    ASSERT_TRUE(eqsat.ok()) << eqsat.status();
    EXPECT_EQ(eqsat->rules_used.count("cc"), dense ? 1u : 0u);
    EXPECT_EQ(CountOps(eqsat->best, OpKind::kConv2D), dense ? 1 : 2);
    ExpectEquivalent(host, eqsat->best);
  }
}

}  // namespace
}  // namespace taso::optimizer
