// Which proved rules apply where, as the searches would match them: sites
// by host node, both directions, side conditions honoured, and rules the
// searches cannot use counted rather than matched.
#include "optimizer/rewrite/rule_matches.h"

#include "core/graph_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using ::testing::ElementsAre;
using testing::F32;
using testing::MakeRule;

// relu(conv(x, w)) = conv_relu(x, w), proved (as MakeRule records it) for a
// dense convolution: its group count is part of the proof's signature.
rules::Rule ConvReluFusion() {
  Graph s, t;
  TensorRef x = s.AddInput("x", F32({1, 4, 6, 6}));
  TensorRef w = s.AddWeight("w", F32({4, 4, 3, 3}));
  s.AddOutput("out", *s.AddOp1(OpKind::kRelu, {}, {*s.AddOp1(OpKind::kConv2D, {}, {x, w})}));
  TensorRef tx = t.AddInput("x", F32({1, 4, 6, 6}));
  TensorRef tw = t.AddWeight("w", F32({4, 4, 3, 3}));
  OpParams relu;
  relu.activation = Activation::kRelu;
  t.AddOutput("out", *t.AddOp1(OpKind::kConv2D, relu, {tx, tw}));
  return MakeRule("fusion", s, t);
}

// conv -> relu twice, dense (nodes 2, 3) and depthwise (nodes 5, 6), and a
// conv with relu fused (node 8).
Graph Host() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 16, 10, 10}));
  TensorRef dense = *g.AddOp1(OpKind::kConv2D, {}, {x, g.AddWeight("a", F32({16, 16, 3, 3}))});
  TensorRef r1 = *g.AddOp1(OpKind::kRelu, {}, {dense});
  TensorRef depthwise = *g.AddOp1(OpKind::kConv2D, {}, {r1, g.AddWeight("b", F32({16, 1, 3, 3}))});
  TensorRef r2 = *g.AddOp1(OpKind::kRelu, {}, {depthwise});
  OpParams relu;
  relu.activation = Activation::kRelu;
  g.AddOutput("out", *g.AddOp1(OpKind::kConv2D, relu, {r2, g.AddWeight("c", F32({16, 16, 3, 3}))}));
  return g;
}

TEST(RuleMatches, ListsEachDirectionWhereItsProofHolds) {
  const Graph host = Host();
  ASSERT_EQ(host.node(2).kind, OpKind::kConv2D);
  ASSERT_EQ(host.node(8).kind, OpKind::kConv2D);
  auto response = MatchProvedRules(GraphToProto(host, false), {ConvReluFusion()}, 10);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->rules_matched(), 1);
  ASSERT_EQ(response->matches_size(), 2) << response->DebugString();
  // Forward: the dense conv and its relu only; the depthwise pair keeps
  // every kind and parameter but not the proof's group count.
  const rules_db::RuleMatch& forward = response->matches(0);
  EXPECT_EQ(forward.rule_id(), "fusion");
  EXPECT_FALSE(forward.backward());
  EXPECT_EQ(forward.count(), 1);
  ASSERT_EQ(forward.sites_size(), 1);
  EXPECT_THAT(forward.sites(0).nodes(), ElementsAre(2, 3));
  EXPECT_EQ(forward.rule().id(), "fusion");
  // Backward: the conv with relu fused, which could be split again.
  const rules_db::RuleMatch& backward = response->matches(1);
  EXPECT_TRUE(backward.backward());
  EXPECT_EQ(backward.count(), 1);
  ASSERT_EQ(backward.sites_size(), 1);
  EXPECT_THAT(backward.sites(0).nodes(), ElementsAre(8));
}

TEST(RuleMatches, CountsAllButListsAtMostMaxSites) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 4, 6, 6}));
  for (int i = 0; i < 3; ++i) {
    TensorRef c = *g.AddOp1(OpKind::kConv2D, {}, {x, g.AddWeight("w" + std::to_string(i), F32({4, 4, 3, 3}))});
    g.AddOutput("out" + std::to_string(i), *g.AddOp1(OpKind::kRelu, {}, {c}));
  }
  auto response = MatchProvedRules(GraphToProto(g, false), {ConvReluFusion()}, 2);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->matches_size(), 1);
  EXPECT_EQ(response->matches(0).count(), 3);
  EXPECT_EQ(response->matches(0).sites_size(), 2);
}

TEST(RuleMatches, RulesTheSearchesCannotUseAreCountedNotMatched) {
  rules::Rule unconditioned = ConvReluFusion();
  unconditioned.set_id("bare");
  unconditioned.clear_conditions();
  rules::Rule unproved = ConvReluFusion();
  unproved.set_id("unproved");
  unproved.set_status(rules::RULE_STATUS_UNKNOWN);
  auto response = MatchProvedRules(GraphToProto(Host(), false), {unconditioned, unproved}, 10);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->matches_size(), 0);
  EXPECT_EQ(response->rules_matched(), 0);
  EXPECT_EQ(response->rules_unusable(), 1);
  EXPECT_THAT(response->first_unusable(), ::testing::HasSubstr("bare"));
  ir::Graph broken;
  broken.add_nodes()->set_kind(ir::OP_RELU);
  EXPECT_EQ(MatchProvedRules(broken, {ConvReluFusion()}, 10).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taso::optimizer
