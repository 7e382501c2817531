#include "pictures/graph_diff.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "pictures/diff_regions.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"

namespace taso::pictures {
namespace {

using ::taso::testing::ConvParams;
using ::taso::testing::GraphBuilder;

int CountChange(const std::vector<NodeChange>& changes, NodeChange c) {
  return static_cast<int>(std::count(changes.begin(), changes.end(), c));
}

// x -> conv -> relu -> conv2 -> y, or with the relu fused into the conv.
Graph ConvRelu(bool fused) {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, 4, 8, 8});
  TensorRef w = b.W("w", {4, 4, 3, 3});
  TensorRef w2 = b.W("w2", {4, 4, 1, 1});
  TensorRef h = fused ? b.Op(OpKind::kConv2D, {x, w}, ConvParams(1, Padding::kSame, Activation::kRelu))
                      : b.Op(OpKind::kRelu, {b.Op(OpKind::kConv2D, {x, w}, ConvParams(1, Padding::kSame))});
  b.Out(b.Op(OpKind::kConv2D, {h, w2}, ConvParams(1, Padding::kSame)));
  return b.graph;
}

TEST(GraphDiffTest, IdenticalGraphsAreUnchanged) {
  auto diff = DiffGraphs(ConvRelu(false), ConvRelu(false));
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_TRUE(diff->unchanged());
  EXPECT_EQ(CountChange(diff->before_change, NodeChange::kKept), ConvRelu(false).num_nodes());
  EXPECT_TRUE(ChangedRegions(ConvRelu(false), ConvRelu(false), *diff).empty());
}

TEST(GraphDiffTest, AFusionIsTwoOperatorsOutAndOneInWithTheRestKept) {
  const Graph before = ConvRelu(false), after = ConvRelu(true);
  auto diff = DiffGraphs(before, after);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_EQ(diff->removed, 2);  // conv (act none), relu
  EXPECT_EQ(diff->added, 1);    // conv (act relu)
  EXPECT_EQ(diff->rewired, 0);
  // The conv after the region is matched top down, though what it reads changed.
  const int last_before = before.outputs()[0].tensor.node, last_after = after.outputs()[0].tensor.node;
  EXPECT_EQ(diff->before_partner[last_before], last_after);
  EXPECT_EQ(diff->before_change[last_before], NodeChange::kKept);
  for (const Node& n : after.nodes()) {
    if (n.kind == OpKind::kConv2D && n.params.activation == Activation::kRelu) {
      EXPECT_EQ(diff->after_change[n.id], NodeChange::kAdded);
    }
  }
  auto regions = ChangedRegions(before, after, *diff);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].before_changed.size(), 2u);
  EXPECT_EQ(regions[0].after_changed.size(), 1u);
  // Context: x and w feed the region, the last conv reads it.
  EXPECT_EQ(regions[0].before_context.size(), 3u);
  EXPECT_EQ(regions[0].after_context.size(), 3u);
}

TEST(GraphDiffTest, NamesOfOperatorsDoNotMatter) {
  Graph renamed = ConvRelu(false);
  std::vector<Node> nodes = renamed.nodes();
  for (Node& n : nodes) {
    if (!IsInputOrWeight(n.kind)) n.name = "exported_" + std::to_string(n.id);
  }
  auto g = Graph::Create(nodes, renamed.outputs());
  ASSERT_TRUE(g.ok()) << g.status();
  auto diff = DiffGraphs(ConvRelu(false), *g);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_TRUE(diff->unchanged());
}

TEST(GraphDiffTest, AMergedDuplicateIsRemovedAndItsReaderRewired) {
  // relu(x) twice, added; after: one relu read twice.
  GraphBuilder before, after;
  TensorRef x = before.In("x", {2, 3});
  before.Out(before.Op(OpKind::kEwAdd, {before.Op(OpKind::kRelu, {x}), before.Op(OpKind::kRelu, {x})}));
  TensorRef y = after.In("x", {2, 3});
  TensorRef r = after.Op(OpKind::kRelu, {y});
  after.Out(after.Op(OpKind::kEwAdd, {r, r}));
  auto diff = DiffGraphs(before.graph, after.graph);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_EQ(diff->removed, 1);
  EXPECT_EQ(diff->added, 0);
  EXPECT_EQ(diff->rewired, 1);
  auto regions = ChangedRegions(before.graph, after.graph, *diff);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].before_changed.size(), 2u);  // the duplicate relu and the add
  EXPECT_EQ(regions[0].after_changed.size(), 1u);   // the add, now reading one relu twice
}

TEST(GraphDiffTest, ChangedWeightValuesAreAChange) {
  const std::string ones(4 * 6, '\1'), twos(4 * 6, '\2');
  GraphBuilder before, after;
  using Side = std::pair<GraphBuilder*, const std::string*>;
  for (auto [b, data] : {Side{&before, &ones}, Side{&after, &twos}}) {
    TensorRef w = b->graph.AddWeight("w", TensorType::RowMajor(DType::kFloat32, {2, 3}),
                                     std::make_shared<const std::string>(*data));
    b->Out(b->Op(OpKind::kRelu, {w}));
  }
  auto diff = DiffGraphs(before.graph, after.graph);
  ASSERT_TRUE(diff.ok()) << diff.status();
  // The weight differs; its reader is the same operator at the output.
  EXPECT_EQ(diff->removed, 1);
  EXPECT_EQ(diff->added, 1);
}

TEST(GraphDiffTest, AnOperatorBetweenTwoRewritesIsKept) {
  // conv -> relu -> pool -> conv -> relu, both pairs fused: the pool has no
  // matched input or reader, only the same weights around it on both sides.
  auto build = [](bool fused) {
    GraphBuilder b;
    TensorRef h = b.In("x", {1, 4, 8, 8});
    for (int i = 0; i < 2; ++i) {
      if (i == 1) h = b.Op(OpKind::kPoolMax, {h}, ::taso::testing::Window(3, 3, 1, Padding::kSame));
      TensorRef w = b.W("w" + std::to_string(i), {4, 4, 3, 3});
      h = fused ? b.Op(OpKind::kConv2D, {h, w}, ConvParams(1, Padding::kSame, Activation::kRelu))
                : b.Op(OpKind::kRelu, {b.Op(OpKind::kConv2D, {h, w}, ConvParams(1, Padding::kSame))});
    }
    b.Out(h);
    return b.graph;
  };
  const Graph before = build(false), after = build(true);
  auto diff = DiffGraphs(before, after);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_EQ(diff->removed, 4);
  EXPECT_EQ(diff->added, 2);
  for (const Node& n : before.nodes()) {
    if (n.kind == OpKind::kPoolMax) {
      EXPECT_EQ(diff->before_change[n.id], NodeChange::kKept);
    }
  }
  EXPECT_EQ(ChangedRegions(before, after, *diff).size(), 2u);
}

TEST(GraphDiffTest, SeparateRewritesAreSeparateRegions) {
  // Two independent branches, each fused.
  auto build = [](bool fused) {
    GraphBuilder b;
    for (const char* name : {"a", "b"}) {
      TensorRef x = b.In(std::string("x") + name, {1, 4, 8, 8});
      TensorRef w = b.W(std::string("w") + name, {4, 4, 3, 3});
      b.Out(fused ? b.Op(OpKind::kConv2D, {x, w}, ConvParams(1, Padding::kSame, Activation::kRelu))
                  : b.Op(OpKind::kRelu, {b.Op(OpKind::kConv2D, {x, w}, ConvParams(1, Padding::kSame))}));
    }
    return b.graph;
  };
  const Graph before = build(false), after = build(true);
  auto diff = DiffGraphs(before, after);
  ASSERT_TRUE(diff.ok()) << diff.status();
  EXPECT_EQ(diff->removed, 4);
  EXPECT_EQ(diff->added, 2);
  EXPECT_EQ(ChangedRegions(before, after, *diff).size(), 2u);
}

}  // namespace
}  // namespace taso::pictures
