// The e-graph's hash-consing: a sum or a product is one e-node whatever order
// its operands are written in, and congruence holds across that order, while
// each e-node keeps the order it was added in.
#include "optimizer/eqsat/egraph.h"

#include "gtest/gtest.h"
#include "core/graph.h"
#include "testing/tensor_types.h"

namespace taso::optimizer {
namespace {

using ::taso::testing::F32;

// Outputs: x+y, y+x, x*y, y*x, concat(x,y), concat(y,x), z+x, y+z.
Graph BothOrders() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 3})), y = g.AddInput("y", F32({2, 3})), z = g.AddInput("z", F32({2, 3}));
  OpParams cat;
  cat.axis = 0;
  g.AddOutput("xy", *g.AddOp1(OpKind::kEwAdd, {}, {x, y}));
  g.AddOutput("yx", *g.AddOp1(OpKind::kEwAdd, {}, {y, x}));
  g.AddOutput("mxy", *g.AddOp1(OpKind::kEwMul, {}, {x, y}));
  g.AddOutput("myx", *g.AddOp1(OpKind::kEwMul, {}, {y, x}));
  g.AddOutput("cxy", *g.AddOp1(OpKind::kConcat, cat, {x, y}));
  g.AddOutput("cyx", *g.AddOp1(OpKind::kConcat, cat, {y, x}));
  g.AddOutput("zx", *g.AddOp1(OpKind::kEwAdd, {}, {z, x}));
  g.AddOutput("yz", *g.AddOp1(OpKind::kEwAdd, {}, {y, z}));
  return g;
}

TEST(EGraphTest, ASumOrProductInEitherOrderIsOneENodeAConcatIsNot) {
  auto built = EGraphFromGraph(BothOrders());
  ASSERT_TRUE(built.ok()) << built.status();
  const EGraph& eg = built->egraph;
  const std::vector<EClassId>& out = built->outputs;
  EXPECT_EQ(eg.Find(out[0]), eg.Find(out[1]));
  EXPECT_EQ(eg.Find(out[2]), eg.Find(out[3]));
  EXPECT_NE(eg.Find(out[4]), eg.Find(out[5]));
  EXPECT_NE(eg.Find(out[0]), eg.Find(out[2]));
  // One e-node for the sum, written as it was first added: x then y.
  const EClass& sum = eg.eclass(out[0]);
  ASSERT_EQ(sum.nodes.size(), 1u);
  const ENode& n = eg.node(sum.nodes[0]);
  ASSERT_EQ(n.children.size(), 2u);
  EXPECT_EQ(eg.op(eg.node(eg.eclass(n.children[0]).nodes[0]).op).name, "x");
  EXPECT_EQ(eg.op(eg.node(eg.eclass(n.children[1]).nodes[0]).op).name, "y");
  // A graph written the other way round is found in the e-graph.
  Graph swapped;
  TensorRef x = swapped.AddInput("x", F32({2, 3})), y = swapped.AddInput("y", F32({2, 3}));
  swapped.AddOutput("yx", *swapped.AddOp1(OpKind::kEwMul, {}, {y, x}));
  auto found = LookupGraph(eg, swapped);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(eg.Find((*found)[0]), eg.Find(out[2]));
}

TEST(EGraphTest, CongruenceHoldsAcrossOperandOrder) {
  auto built = EGraphFromGraph(BothOrders());
  ASSERT_TRUE(built.ok()) << built.status();
  EGraph& eg = built->egraph;
  const std::vector<EClassId> out = built->outputs;
  const int nodes_before = eg.num_enodes();
  // x = y makes z+x and y+z one sum (written z+x and y+z: opposite orders).
  const ENode sum = eg.node(eg.eclass(out[0]).nodes[0]);  // x+y
  const EClassId x = sum.children[0], y = sum.children[1];
  ASSERT_NE(eg.Find(out[6]), eg.Find(out[7]));
  ASSERT_TRUE(eg.Union(x, y));
  eg.Rebuild();
  EXPECT_EQ(eg.Find(out[6]), eg.Find(out[7]));
  // concat(x,y) and concat(y,x) are now concat(x,x): one e-node too.
  EXPECT_EQ(eg.Find(out[4]), eg.Find(out[5]));
  EXPECT_LT(eg.num_enodes(), nodes_before);
}

}  // namespace
}  // namespace taso::optimizer
