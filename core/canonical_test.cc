#include "core/canonical.h"

#include <algorithm>
#include <random>

#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso {
namespace {

using ::taso::testing::F32;

// conv(i, w) + relu(conv(i, w2)), and matmul(x, w3) as a second output.
Graph Sample() {
  Graph g;
  TensorRef i = g.AddInput("i", F32({1, 4, 5, 5}));
  TensorRef w = g.AddWeight("w", F32({4, 4, 3, 3}));
  TensorRef w2 = g.AddWeight("w2", F32({4, 4, 1, 1}));
  TensorRef x = g.AddInput("x", F32({2, 4}));
  TensorRef w3 = g.AddWeight("w3", F32({4, 4}));
  TensorRef c1 = *g.AddOp1(OpKind::kConv2D, OpParams{}, {i, w});
  TensorRef c2 = *g.AddOp1(OpKind::kConv2D, OpParams{}, {i, w2});
  TensorRef r = *g.AddOp1(OpKind::kRelu, OpParams{}, {c2});
  TensorRef s = *g.AddOp1(OpKind::kEwAdd, OpParams{}, {c1, r});
  TensorRef m = *g.AddOp1(OpKind::kMatMul, OpParams{}, {x, w3});
  g.AddOutput("y", s);
  g.AddOutput("z", m);
  return g;
}

// The same graph with node ids permuted by `perm` (a topological order is not required).
Graph Renumber(const Graph& g, const std::vector<int>& perm) {
  std::vector<Node> nodes = g.nodes();
  for (Node& n : nodes) {
    n.id = perm[n.id];
    for (TensorRef& r : n.inputs) r.node = perm[r.node];
  }
  std::reverse(nodes.begin(), nodes.end());
  std::vector<GraphOutput> outs = g.outputs();
  for (GraphOutput& o : outs) o.tensor.node = perm[o.tensor.node];
  auto out = Graph::Create(nodes, outs);
  EXPECT_TRUE(out.ok()) << out.status();
  return *out;
}

TEST(Canonical, StableUnderRenumbering) {
  const Graph g = Sample();
  auto text = CanonicalText(g);
  auto hash = StructuralHash(g);
  ASSERT_TRUE(text.ok()) << text.status();
  ASSERT_TRUE(hash.ok());
  std::vector<int> perm(g.num_nodes());
  for (int i = 0; i < g.num_nodes(); ++i) perm[i] = i;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(perm.begin(), perm.end(), rng);
    const Graph h = Renumber(g, perm);
    EXPECT_EQ(*CanonicalText(h), *text);
    EXPECT_EQ(*StructuralHash(h), *hash);
  }
}

TEST(Canonical, TextIsReadable) {
  auto text = CanonicalText(Sample());
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("= conv2d[stride=1x1,pad=same,act=none](%"), std::string::npos) << *text;
  EXPECT_NE(text->find("= input \"x\" f32[2,4]"), std::string::npos) << *text;
  EXPECT_NE(text->find("output \"z\" = %"), std::string::npos) << *text;
}

TEST(Canonical, SensitiveToStructure) {
  const Hash128 base = *StructuralHash(Sample());
  // Different parameter.
  Graph g = Sample();
  Graph h;
  TensorRef x = h.AddInput("x", F32({2, 4}));
  TensorRef w = h.AddWeight("w", F32({4, 4}));
  OpParams relu;
  relu.activation = Activation::kRelu;
  h.AddOutput("y", *h.AddOp1(OpKind::kMatMul, OpParams{}, {x, w}));
  Graph h2;
  x = h2.AddInput("x", F32({2, 4}));
  w = h2.AddWeight("w", F32({4, 4}));
  h2.AddOutput("y", *h2.AddOp1(OpKind::kMatMul, relu, {x, w}));
  EXPECT_NE(*StructuralHash(h), *StructuralHash(h2));
  // Swapped operands of a non-commutative op.
  Graph h3;
  x = h3.AddInput("x", F32({4, 4}));
  w = h3.AddWeight("w", F32({4, 4}));
  h3.AddOutput("y", *h3.AddOp1(OpKind::kMatMul, OpParams{}, {w, x}));
  Graph h4;
  x = h4.AddInput("x", F32({4, 4}));
  w = h4.AddWeight("w", F32({4, 4}));
  h4.AddOutput("y", *h4.AddOp1(OpKind::kMatMul, OpParams{}, {x, w}));
  EXPECT_NE(*StructuralHash(h3), *StructuralHash(h4));
  // Output order is part of the structure (outputs are named and ordered).
  std::vector<Node> nodes = g.nodes();
  std::vector<GraphOutput> outs = {g.outputs()[1], g.outputs()[0]};
  EXPECT_NE(*StructuralHash(*Graph::Create(nodes, outs)), base);
}

TEST(Canonical, NodeHashesIdentifyEqualComputations) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({3}));
  TensorRef a = *g.AddOp1(OpKind::kRelu, OpParams{}, {x});
  TensorRef b = *g.AddOp1(OpKind::kRelu, OpParams{}, {x});
  TensorRef c = *g.AddOp1(OpKind::kTanh, OpParams{}, {x});
  auto hashes = NodeStructuralHashes(g);
  ASSERT_TRUE(hashes.ok());
  EXPECT_EQ((*hashes)[a.node], (*hashes)[b.node]);
  EXPECT_NE((*hashes)[a.node], (*hashes)[c.node]);
}

}  // namespace
}  // namespace taso
