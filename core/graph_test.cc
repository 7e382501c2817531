#include "core/graph.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso {
namespace {

using ::testing::HasSubstr;

using ::taso::testing::F32;

Node MakeNode(int id, OpKind kind, std::vector<TensorRef> inputs) {
  Node n;
  n.id = id;
  n.kind = kind;
  n.inputs = std::move(inputs);
  return n;
}

Node MakeInput(int id, const std::string& name, TensorType t) {
  Node n = MakeNode(id, OpKind::kInput, {});
  n.name = name;
  n.output_types = {std::move(t)};
  return n;
}

TEST(Graph, BuildsAndInfers) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 4}));
  TensorRef w = g.AddWeight("w", F32({4, 3}));
  auto mm = g.AddOp1(OpKind::kMatMul, OpParams{}, {x, w});
  ASSERT_TRUE(mm.ok()) << mm.status();
  auto r = g.AddOp1(OpKind::kRelu, OpParams{}, {*mm});
  ASSERT_TRUE(r.ok());
  g.AddOutput("y", *r);
  EXPECT_EQ(g.type(*r), F32({2, 3}));
  EXPECT_EQ(g.num_ops(), 2);
  EXPECT_TRUE(g.Validate().ok());
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(Graph, AddOpErrorNamesTheOperator) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 4}));
  auto bad = g.AddOp1(OpKind::kMatMul, OpParams{}, {x, x});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 1 (matmul)"));
  EXPECT_THAT(bad.status().message(), HasSubstr("inner dimensions differ"));
  EXPECT_EQ(g.num_nodes(), 1);  // nothing was appended
  auto dangling = g.AddOp1(OpKind::kRelu, OpParams{}, {{7, 0}});
  ASSERT_FALSE(dangling.ok());
  EXPECT_THAT(dangling.status().message(), HasSubstr("missing node 7"));
  auto split = g.AddOp1(OpKind::kConcat, OpParams{}, {x, x});
  ASSERT_TRUE(split.ok());
  OpParams s;
  auto two = g.AddOp1(OpKind::kSplit, s, {*split});
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), HasSubstr("use AddOp"));
}

TEST(Graph, CreateAcceptsAnyNodeOrder) {
  // relu(x) listed before x.
  std::vector<Node> nodes = {MakeNode(1, OpKind::kRelu, {{0, 0}}), MakeInput(0, "x", F32({3}))};
  auto g = Graph::Create(nodes, {{"y", {1, 0}}});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->type({1, 0}), F32({3}));
  EXPECT_TRUE(g->Validate().ok());
}

TEST(Graph, CreateRejectsCycles) {
  Node a = MakeNode(1, OpKind::kEwAdd, {{0, 0}, {2, 0}});
  Node b = MakeNode(2, OpKind::kRelu, {{1, 0}});
  auto g = Graph::Create({MakeInput(0, "x", F32({3})), a, b}, {{"y", {2, 0}}});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("cycle"));
}

TEST(Graph, CreateRejectsDanglingAndBadIds) {
  auto g = Graph::Create({MakeInput(0, "x", F32({3})), MakeNode(1, OpKind::kRelu, {{5, 0}})}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("missing node 5"));
  g = Graph::Create({MakeInput(0, "x", F32({3})), MakeNode(1, OpKind::kRelu, {{0, 1}})}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("output 1"));
  g = Graph::Create({MakeInput(0, "x", F32({3})), MakeNode(3, OpKind::kRelu, {{0, 0}})}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("without gaps"));
  g = Graph::Create({MakeInput(0, "x", F32({3}))}, {{"y", {0, 2}}});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("graph output 'y'"));
}

TEST(Graph, CreateRejectsShapeErrors) {
  auto g = Graph::Create({MakeInput(0, "x", F32({2, 4})), MakeInput(1, "w", F32({3, 4})),
                          MakeNode(2, OpKind::kMatMul, {{0, 0}, {1, 0}})},
                         {{"y", {2, 0}}});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("node 2 (matmul)"));
  Node bad = MakeInput(0, "x", F32({2, 4}));
  bad.data = std::make_shared<const std::string>(7, '\0');
  g = Graph::Create({bad}, {});
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("data bytes"));
}

}  // namespace
}  // namespace taso
