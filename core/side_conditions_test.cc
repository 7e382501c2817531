#include "core/side_conditions.h"

#include "core/graph_proto.h"
#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso {
namespace {

using ::taso::testing::F32;

// relu(conv(x, w)) with x of `channels` channels and w of `per_group` input
// channels per group: a dense convolution when they are equal.
Graph ReluConv(int64_t channels, int64_t per_group) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, channels, 4, 4}));
  TensorRef w = g.AddWeight("w", F32({channels, per_group, 3, 3}));
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {*g.AddOp1(OpKind::kConv2D, {}, {x, w})}));
  return g;
}

rules::Rule RuleOf(const Graph& source, const Graph& target) {
  rules::Rule rule;
  *rule.mutable_source() = GraphToProto(source);
  *rule.mutable_target() = GraphToProto(target);
  auto s = ConditionsOf(source);
  auto t = ConditionsOf(target);
  EXPECT_TRUE(s.ok() && t.ok());
  *rule.mutable_conditions() = ConditionsToProto({*s, *t});
  return rule;
}

TEST(ProofSignature, GroupsBroadcastAndEqualHalvesAreFacts) {
  auto dense = ProofSignatureOf(OpKind::kConv2D, {}, {F32({1, 4, 5, 5}), F32({8, 4, 3, 3})}, 0);
  auto depthwise = ProofSignatureOf(OpKind::kConv2D, {}, {F32({1, 4, 5, 5}), F32({4, 1, 3, 3})}, 0);
  ASSERT_TRUE(dense.ok() && depthwise.ok());
  EXPECT_EQ(dense->ToString(), "conv2d(1,1,0,0,1)");
  EXPECT_EQ(depthwise->ToString(), "conv2d(1,1,0,0,4)");
  OpParams axis1;
  axis1.axis = 1;
  EXPECT_EQ(ProofSignatureOf(OpKind::kConcat, axis1, {F32({1, 2}), F32({1, 2})}, 0)->ToString(), "concat(1,1)");
  EXPECT_EQ(ProofSignatureOf(OpKind::kConcat, axis1, {F32({1, 2}), F32({1, 3})}, 0)->ToString(), "concat(1,0)");
  EXPECT_EQ(ProofSignatureOf(OpKind::kEwAdd, {}, {F32({2, 2}), F32({2, 2})}, 0)->name, "ewadd");
  EXPECT_EQ(ProofSignatureOf(OpKind::kEwAdd, {}, {F32({2, 2}), F32({1, 2})}, 0)->name, "ewadd_bcast");
}

TEST(ProofSignature, NaryConcatNestsToTheLeft) {
  OpParams axis0;
  auto sigs = NodeSignatures(OpKind::kConcat, axis0, {F32({1, 2}), F32({1, 2}), F32({2, 2})}, 1);
  ASSERT_TRUE(sigs.ok()) << sigs.status();
  ASSERT_EQ(sigs->size(), 2u);
  EXPECT_EQ((*sigs)[0].ToString(), "concat(0,1)");  // [1,2] beside [1,2]
  EXPECT_EQ((*sigs)[1].ToString(), "concat(0,1)");  // [2,2] beside [2,2]
}

TEST(SideConditions, HoldOnlyWhereEveryFactIsTheSame) {
  const Graph dense = ReluConv(4, 4);
  auto conditions = ConditionsOf(dense);
  ASSERT_TRUE(conditions.ok()) << conditions.status();
  const int conv = 2;
  ASSERT_EQ(dense.node(conv).kind, OpKind::kConv2D);
  const auto& recorded = (*conditions)[conv];
  // Another dense convolution, at other shapes: the proof holds.
  EXPECT_TRUE(ConditionsHold(recorded, OpKind::kConv2D, {}, {F32({2, 16, 9, 9}), F32({32, 16, 3, 3})}, 1));
  // Depthwise and grouped ones: it does not.
  EXPECT_FALSE(ConditionsHold(recorded, OpKind::kConv2D, {}, {F32({1, 16, 9, 9}), F32({16, 1, 3, 3})}, 1));
  EXPECT_FALSE(ConditionsHold(recorded, OpKind::kConv2D, {}, {F32({1, 16, 9, 9}), F32({16, 8, 3, 3})}, 1));
  EXPECT_TRUE((*conditions)[0].empty());  // variables assume nothing
}

TEST(SideConditions, RecordedConditionsRoundTripAndAreCheckedAgainstTheSides) {
  const Graph source = ReluConv(4, 4);
  Graph target;
  TensorRef x = target.AddInput("x", F32({1, 4, 4, 4}));
  TensorRef w = target.AddWeight("w", F32({4, 4, 3, 3}));
  OpParams relu;
  relu.activation = Activation::kRelu;
  target.AddOutput("y", *target.AddOp1(OpKind::kConv2D, relu, {x, w}));
  rules::Rule rule = RuleOf(source, target);
  auto read = RecordedConditions(rule, source, target);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(DescribeConditions(read->source), "conv2d(1,1,0,0,1) relu()");
  EXPECT_EQ(DescribeConditions(read->target), "conv2d(1,1,0,1,1)");

  rules::Rule none = rule;
  none.clear_conditions();
  EXPECT_EQ(RecordedConditions(none, source, target).status().code(), absl::StatusCode::kFailedPrecondition);

  rules::Rule old = rule;
  old.mutable_conditions()->set_vocabulary_version(kProofSignatureVersion - 1);
  EXPECT_EQ(RecordedConditions(old, source, target).status().code(), absl::StatusCode::kFailedPrecondition);

  // Conditions that contradict the rule's own shapes (a dense proof pasted
  // onto a depthwise rule) are not trusted.
  const Graph depthwise = ReluConv(4, 1);
  rules::Rule pasted = rule;
  *pasted.mutable_source() = GraphToProto(depthwise);
  auto contradicted = RecordedConditions(pasted, depthwise, target);
  EXPECT_EQ(contradicted.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(contradicted.status().message().find("conv2d(1,1,0,0,4)"), std::string::npos) << contradicted.status();
}

}  // namespace
}  // namespace taso
