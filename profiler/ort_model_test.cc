// The models the ort backend writes to time a signature: weights as
// initializers, copies that bring the weights to their target size, nodes
// that cycle those copies, chained where an operator's output fits its
// operand, and values for graphs that carry none.
#include "profiler/ort/ort_model.h"

#include <vector>

#include "costs/signature_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::ConvParams;
using ::taso::testing::F32;
using ::taso::testing::GraphBuilder;
using ::taso::testing::Strided;
using ::testing::Not;

int Count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

// The node each operator node reads as operand `i`, in order.
std::vector<int> OperandNodes(const Graph& g, OpKind kind, int i) {
  std::vector<int> read;
  for (const Node& n : g.nodes()) {
    if (n.kind == kind) read.push_back(n.inputs[i].node);
  }
  return read;
}

TEST(OrtModelTest, MatmulWeightIsAnInitializerAndAColumnMajorInputATranspose) {
  // A 2-D right-hand side is a weight with values (ORT pre-packs it).
  auto m = SignatureGraph(MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 4096})}));
  ASSERT_TRUE(m.ok()) << m.status();
  const Graph& g = m->graph;
  EXPECT_EQ(m->operators, 1);
  EXPECT_EQ(Count(g, OpKind::kInput), 1);
  ASSERT_EQ(Count(g, OpKind::kWeight), 1);
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kWeight) {
      ASSERT_TRUE(n.data) << "the weight has no values";
    }
  }
  // A batched, column-major left operand: an input transposed by strides.
  auto t = SignatureGraph(MustCanonicalize(OpKind::kMatMul, {}, {Strided({4, 64, 32}, {2048, 1, 64}), F32({4, 32, 16})}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Count(t->graph, OpKind::kInput), 2);
  EXPECT_EQ(Count(t->graph, OpKind::kTranspose), 1);
  auto model = TimingModel(t->graph);
  EXPECT_TRUE(model.ok()) << model.status();
}

TEST(OrtModelTest, CopiesBringTheWeightsToTheirTarget) {
  const CanonicalSignature small = MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 256})});
  EXPECT_EQ(OrtCopies(small, int64_t{8} << 20, 16), 16);  // 0.5 MiB each
  EXPECT_EQ(OrtCopies(small, int64_t{8} << 20, 4), 4);    // capped
  EXPECT_EQ(OrtCopies(MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 4096})}), int64_t{8} << 20, 16), 1);
  EXPECT_EQ(OrtCopies(MustCanonicalize(OpKind::kRelu, {}, {F32({1, 512})}), int64_t{8} << 20, 16), 1);  // no weights
  auto m = SignatureGraph(small, 3);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->operators, 3);
  EXPECT_EQ(Count(m->graph, OpKind::kInput), 1);
  EXPECT_EQ(Count(m->graph, OpKind::kWeight), 3);
  EXPECT_EQ(Count(m->graph, OpKind::kMatMul), 3);
  EXPECT_EQ(m->graph.outputs().size(), 3u);
}

// Above one thread an operator is spread over many nodes (OrtNodes): a
// multiple of the copies, about 1.5 ms of estimated work, at most the cap,
// never fewer than the copies; node k reads weight set k % copies.
TEST(OrtModelTest, NodesCycleTheCopiesWeights) {
  // 512 -> 256 cannot feed the next node: the nodes are side by side.
  const CanonicalSignature small = MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 256})});
  EXPECT_TRUE(ChainedOperands(small).empty());
  const int spread = OrtNodes(small, 8, 1.5, 64, 64);
  EXPECT_EQ(spread % 8, 0);
  EXPECT_GE(spread, 32);
  EXPECT_LE(spread, 64);
  EXPECT_EQ(OrtNodes(MustCanonicalize(OpKind::kRelu, {}, {F32({1, 512})}), 1, 1.5, 64, 64), 64);  // capped
  EXPECT_EQ(OrtNodes(small, 3, 100, 64, 64), 63);                                         // a multiple of 3
  EXPECT_EQ(OrtNodes(small, 16, 1.5, 8, 64), 16);                                         // never below the copies
  // A 0.2-GFLOP conv is work enough alone.
  const CanonicalSignature conv = MustCanonicalize(OpKind::kConv2D, ConvParams(1, Padding::kSame, Activation::kNone),
                                            {F32({1, 128, 28, 28}), F32({128, 128, 3, 3})});
  EXPECT_EQ(OrtNodes(conv, 1, 1.5, 64, 64), 1);

  auto m = SignatureGraph(small, 3, 7);
  ASSERT_TRUE(m.ok()) << m.status();
  const Graph& g = m->graph;
  EXPECT_EQ(m->operators, 7);
  EXPECT_EQ(Count(g, OpKind::kInput), 3);  // one per group of 3 nodes
  EXPECT_EQ(Count(g, OpKind::kWeight), 3);
  EXPECT_EQ(Count(g, OpKind::kMatMul), 7);
  EXPECT_EQ(g.outputs().size(), 7u);
  const std::vector<int> inputs = OperandNodes(g, OpKind::kMatMul, 0);
  const std::vector<int> weights = OperandNodes(g, OpKind::kMatMul, 1);
  ASSERT_EQ(weights.size(), 7u);
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(weights[k], weights[k % 3]) << "node " << k;
    EXPECT_EQ(inputs[k], inputs[(k / 3) * 3]) << "node " << k;
  }
  EXPECT_NE(weights[0], weights[1]);
  EXPECT_NE(weights[1], weights[2]);
  // No two nodes read the same input and weights.
  EXPECT_NE(inputs[0], inputs[3]);
  EXPECT_NE(inputs[3], inputs[6]);

  // A column-major input is a transpose of a graph input in every group.
  auto t = SignatureGraph(MustCanonicalize(OpKind::kMatMul, {}, {Strided({4, 64, 32}, {2048, 1, 64}), F32({4, 32, 16})}), 1,
                          4);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Count(t->graph, OpKind::kInput), 5);  // 4 left operands, 1 shared right one
  EXPECT_EQ(Count(t->graph, OpKind::kTranspose), 4);
  EXPECT_EQ(Count(t->graph, OpKind::kMatMul), 4);
}

// Where the output can feed the next node, the nodes form a chain: one
// output to bind whatever the node count, weights still cycled.
TEST(OrtModelTest, NodesWhoseOutputFitsTheirOperandFormAChain) {
  const CanonicalSignature square = MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 512})});
  EXPECT_THAT(ChainedOperands(square), ::testing::ElementsAre(0));
  EXPECT_EQ(OrtNodes(square, 8, 100, 64, 8), 64);  // one output however many nodes
  auto m = SignatureGraph(square, 8, 64);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->operators, 64);
  EXPECT_EQ(Count(m->graph, OpKind::kInput), 1);
  EXPECT_EQ(Count(m->graph, OpKind::kWeight), 8);
  ASSERT_EQ(m->graph.outputs().size(), 1u);
  const std::vector<int> left = OperandNodes(m->graph, OpKind::kMatMul, 0);
  const std::vector<int> right = OperandNodes(m->graph, OpKind::kMatMul, 1);
  ASSERT_EQ(left.size(), 64u);
  EXPECT_EQ(m->graph.nodes()[left[0]].kind, OpKind::kInput);
  for (int k = 1; k < 64; ++k) {
    EXPECT_EQ(m->graph.nodes()[left[k]].kind, OpKind::kMatMul) << "node " << k;
    EXPECT_EQ(right[k], right[k % 8]) << "node " << k;
  }
  // The output is the last matmul's: no matmul reads it.
  const int last = m->graph.outputs()[0].tensor.node;
  EXPECT_EQ(m->graph.nodes()[last].kind, OpKind::kMatMul);
  EXPECT_THAT(left, ::testing::Not(::testing::Contains(last)));

  // Two operands of the output's type read the last two values, so an
  // elementwise product never repeats a factor (x * y * y ... decays
  // through denormals).
  const CanonicalSignature mul = MustCanonicalize(OpKind::kEwMul, {}, {F32({1, 512}), F32({1, 512})});
  EXPECT_THAT(ChainedOperands(mul), ::testing::ElementsAre(0, 1));
  auto p = SignatureGraph(mul, 1, 5);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Count(p->graph, OpKind::kInput), 2);
  const std::vector<int> a = OperandNodes(p->graph, OpKind::kEwMul, 0);
  const std::vector<int> b = OperandNodes(p->graph, OpKind::kEwMul, 1);
  ASSERT_EQ(a.size(), 5u);
  for (int k = 2; k < 5; ++k) {
    EXPECT_EQ(b[k], a[k - 1]) << "node " << k << " reads node k-2's output second";
    EXPECT_NE(a[k], b[k]);
  }
  // A product by an operand of another shape repeats that factor: unchained.
  EXPECT_TRUE(ChainedOperands(MustCanonicalize(OpKind::kEwMul, {}, {F32({4, 512}), F32({1, 512})})).empty());
  EXPECT_TRUE(ChainedOperands(MustCanonicalize(OpKind::kScalarMul, {}, {F32({1, 512}), F32({})})).empty());
  // ORT folds consecutive transposes into one.
  OpParams swap;
  swap.perm = {1, 0};
  swap.shuffle = true;
  EXPECT_TRUE(ChainedOperands(MustCanonicalize(OpKind::kTranspose, swap, {F32({64, 64})})).empty());
  // A column-major operand would need a transpose between nodes.
  EXPECT_THAT(ChainedOperands(MustCanonicalize(OpKind::kMatMul, {}, {Strided({4, 32, 32}, {1024, 1, 32}), F32({4, 32, 32})})),
              ::testing::ElementsAre(1));
}

// Unchained, every node's outputs are graph outputs, bound on every run: a
// split into 8 is spread over at most 8 nodes for 64 outputs.
TEST(OrtModelTest, UnchainedNodesAreCappedByTheirOutputs) {
  OpParams eight;
  eight.axis = 1;
  eight.sizes = std::vector<int64_t>(8, 64);
  const CanonicalSignature split = MustCanonicalize(OpKind::kSplit, eight, {F32({1, 512})});
  EXPECT_TRUE(ChainedOperands(split).empty());
  EXPECT_EQ(OrtNodes(split, 1, 100, 64, 64), 8);
  auto m = SignatureGraph(split, 1, 8);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->operators, 8);
  EXPECT_EQ(m->graph.outputs().size(), 64u);
}

TEST(OrtModelTest, GraphWithoutWeightValuesGetsThem) {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, 4, 8, 8});
  b.Out(b.Op(OpKind::kConv2D, {x, b.W("w", {4, 4, 3, 3})}, ConvParams(1, Padding::kSame, Activation::kRelu)));
  auto model = TimingModel(b.graph);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GT(model->size(), 4u * 4 * 3 * 3 * sizeof(float));  // the filled-in weight is in it
}

}  // namespace
}  // namespace taso::profiler
