// The DOT text of the rule and diff pictures: what a reader must find in
// them. Rendering to SVG (Graphviz) is tested where cli/ runs it.
#include <string>

#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "core/side_conditions.h"
#include "gtest/gtest.h"
#include "pictures/diff_picture.h"
#include "pictures/rule_picture.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"

namespace taso::pictures {
namespace {

using ::taso::testing::ConvParams;
using ::taso::testing::GraphBuilder;

int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

rules::Rule ProvedFusionRule() {
  auto rules = RulesFromSexpr("(relu (conv2d 1 1 0 0 ?x@1_4_5_5 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?x@1_4_5_5 ?w@4_4_3_3)");
  EXPECT_TRUE(rules.ok()) << rules.status();
  rules::Rule rule = (*rules)[0];
  rule.set_id("r-fusion");
  rule.set_status(rules::RULE_STATUS_PROVED);
  auto source = GraphFromProto(rule.source());
  auto target = GraphFromProto(rule.target());
  auto s = ConditionsOf(*source);
  auto t = ConditionsOf(*target);
  EXPECT_TRUE(s.ok() && t.ok());
  *rule.mutable_conditions() = ConditionsToProto({*s, *t});
  rule.mutable_proof()->add_axioms_used("conv_relu_fusion");
  return rule;
}

TEST(RulePictureTest, BothSidesSideBySideWithSharedVariablesAndConditions) {
  auto dot = RuleDot(ProvedFusionRule());
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_NE(dot->find("subgraph \"cluster_source\""), std::string::npos) << *dot;
  EXPECT_NE(dot->find("subgraph \"cluster_target\""), std::string::npos) << *dot;
  // Each variable on both sides, named and coloured alike.
  EXPECT_EQ(Occurrences(*dot, "label=\"input x\\nf32[1,4,5,5]\""), 2) << *dot;
  EXPECT_EQ(Occurrences(*dot, "label=\"weight w\\nf32[4,4,3,3]\""), 2) << *dot;
  EXPECT_EQ(Occurrences(*dot, "fillcolor=\"#cfe3f7\""), 2) << *dot;
  // Operators with their key parameters and shapes.
  EXPECT_NE(dot->find("conv2d\\nstride=1x1 pad=same act=none\\nf32[1,4,5,5]"), std::string::npos) << *dot;
  EXPECT_NE(dot->find("conv2d\\nstride=1x1 pad=same act=relu\\nf32[1,4,5,5]"), std::string::npos) << *dot;
  EXPECT_NE(dot->find("label=\"relu\\nf32[1,4,5,5]\""), std::string::npos) << *dot;
  // The caption: id, status, side conditions, axioms.
  EXPECT_NE(dot->find("rule r-fusion (proved)"), std::string::npos) << *dot;
  EXPECT_NE(dot->find("if conv2d(1,1,0,0,1) relu()  =>  conv2d(1,1,0,1,1)"), std::string::npos) << *dot;
  EXPECT_NE(dot->find("proved from: conv_relu_fusion"), std::string::npos) << *dot;
}

TEST(RulePictureTest, ARuleWithoutConditionsSaysSo) {
  rules::Rule rule = ProvedFusionRule();
  rule.clear_conditions();
  auto dot = RuleDot(rule);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_NE(dot->find("side conditions: none recorded"), std::string::npos) << *dot;
}

TEST(RulePictureTest, ABrokenSideIsAnError) {
  rules::Rule rule = ProvedFusionRule();
  rule.mutable_source()->mutable_nodes(2)->mutable_inputs(0)->set_node(7);
  auto dot = RuleDot(rule);
  EXPECT_EQ(dot.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dot.status().message().find("r-fusion"), absl::string_view::npos) << dot.status();
}

// `blocks` chains of x -> conv -> relu -> matmul-free tail; fused or not.
Graph Blocks(int blocks, bool fused) {
  GraphBuilder b;
  TensorRef h = b.In("data", {1, 4, 8, 8});
  for (int i = 0; i < blocks; ++i) {
    TensorRef w = b.W("w" + std::to_string(i), {4, 4, 3, 3});
    // A pooling between blocks keeps each fusion its own region.
    if (i > 0) h = b.Op(OpKind::kPoolMax, {h}, ::taso::testing::Window(1, 1, 1, Padding::kSame));
    h = fused ? b.Op(OpKind::kConv2D, {h, w}, ConvParams(1, Padding::kSame, Activation::kRelu))
              : b.Op(OpKind::kRelu, {b.Op(OpKind::kConv2D, {h, w}, ConvParams(1, Padding::kSame))});
  }
  b.Out(b.Op(OpKind::kTanh, {h}));
  return b.graph;
}

TEST(DiffPictureTest, RegionsBeforeAndAfterWithChangesMarked) {
  DiffPictureOptions options;
  options.title = "in.onnx -> out.onnx";
  auto picture = DrawDiff(Blocks(2, false), Blocks(2, true), options);
  ASSERT_TRUE(picture.ok()) << picture.status();
  const std::string& dot = picture->dot;
  EXPECT_EQ(picture->regions, 2);
  EXPECT_EQ(picture->regions_drawn, 2);
  EXPECT_EQ(picture->diff.removed, 4);
  EXPECT_EQ(picture->diff.added, 2);
  for (const char* cluster : {"cluster_r1", "cluster_r1before", "cluster_r1after", "cluster_r2before"}) {
    EXPECT_NE(dot.find(cluster), std::string::npos) << cluster << "\n" << dot;
  }
  // Removed (red) conv and relu per region, added (green) fused conv.
  EXPECT_EQ(Occurrences(dot, "fillcolor=\"#f7c8c8\""), 4) << dot;
  EXPECT_EQ(Occurrences(dot, "fillcolor=\"#c9ecc9\""), 2) << dot;
  EXPECT_EQ(Occurrences(dot, "stride=1x1 pad=same act=relu"), 2) << dot;
  EXPECT_NE(dot.find("in.onnx -> out.onnx"), std::string::npos);
  EXPECT_NE(dot.find("4 nodes removed (red), 2 added (green), 0 reading other inputs (orange) in 2 regions"),
            std::string::npos)
      << dot;
  // Unchanged neighbours greyed (the pool, weights, data, tanh); the tanh's
  // output is no news, so no output node.
  EXPECT_NE(dot.find("label=\"tanh\\nf32[1,4,8,8]\", shape=\"box\", style=\"rounded,filled\", color=\"#9e9e9e\""),
            std::string::npos)
      << dot;
  EXPECT_EQ(dot.find("output out0"), std::string::npos) << dot;
}

TEST(DiffPictureTest, TheNodeLimitLeavesRegionsOutAndSaysSo) {
  DiffPictureOptions options;
  options.max_nodes = 9;  // one region: 2 + 1 changed, 3 + 3 context
  auto picture = DrawDiff(Blocks(3, false), Blocks(3, true), options);
  ASSERT_TRUE(picture.ok()) << picture.status();
  EXPECT_EQ(picture->regions, 3);
  EXPECT_EQ(picture->regions_drawn, 1);
  EXPECT_NE(picture->dot.find("2 regions (18 nodes) not drawn: over the limit of 9 nodes"), std::string::npos)
      << picture->dot;
  options.max_nodes = 0;
  EXPECT_EQ(DrawDiff(Blocks(1, false), Blocks(1, true), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DiffPictureTest, NoChangesSaysSo) {
  auto picture = DrawDiff(Blocks(2, false), Blocks(2, false), {});
  ASSERT_TRUE(picture.ok()) << picture.status();
  EXPECT_EQ(picture->regions, 0);
  EXPECT_NE(picture->dot.find("no changes"), std::string::npos) << picture->dot;
}

}  // namespace
}  // namespace taso::pictures
