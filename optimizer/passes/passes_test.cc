// Batch-norm folding, constant folding, split flattening and the numerical check.
#include "optimizer/passes/passes.h"

#include <cstring>

#include "gtest/gtest.h"
#include "optimizer/passes/numeric_check.h"
#include "testing/tensor_types.h"

namespace taso::optimizer {
namespace {

using ::taso::testing::F32;

std::shared_ptr<const std::string> Data(const TensorType& t, float start, float step) {
  std::vector<float> v(t.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i % 7);
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// conv -> (+bias) -> batchnorm -> relu, every weight with values; the bias
// of shape `bias_dims`, the input of `input_dims`.
Graph ConvBn(bool with_bias, std::vector<int64_t> bias_dims = {4, 1, 1},
             std::vector<int64_t> input_dims = {1, 3, 6, 6}) {
  Graph g;
  TensorRef x = g.AddInput("x", F32(input_dims));
  TensorRef w = g.AddWeight("w", F32({4, 3, 3, 3}), Data(F32({4, 3, 3, 3}), -0.3f, 0.1f));
  TensorRef y = *g.AddOp1(OpKind::kConv2D, {}, {x, w});
  if (with_bias) {
    auto sum = g.AddOp1(OpKind::kEwAdd, {}, {y, g.AddWeight("b", F32(bias_dims), Data(F32(bias_dims), 0.2f, 0.1f))});
    EXPECT_TRUE(sum.ok()) << sum.status();
    y = *sum;
  }
  std::vector<TensorRef> bn = {y};
  const char* names[] = {"scale", "shift", "mean", "var"};
  for (int i = 0; i < 4; ++i) bn.push_back(g.AddWeight(names[i], F32({4}), Data(F32({4}), 0.5f + i, 0.25f)));
  OpParams p;
  p.epsilon = 1e-3f;
  TensorRef out = *g.AddOp1(OpKind::kBatchNorm, p, bn);
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {out}));
  return g;
}

TEST(PassesTest, BatchNormFoldsIntoTheConvolution) {
  for (bool bias : {false, true}) {
    const Graph g = ConvBn(bias);
    auto folded = FoldBatchNorm(g);
    ASSERT_TRUE(folded.ok()) << folded.status();
    EXPECT_EQ(folded->changed, 1);
    for (const Node& n : folded->graph.nodes()) EXPECT_NE(n.kind, OpKind::kBatchNorm);
    EXPECT_EQ(folded->graph.num_ops(), 3);  // conv, bias add, relu
    NumericCheck check = CompareGraphs(g, folded->graph);
    EXPECT_TRUE(check.ran && check.equal) << check.reason;
  }
}

TEST(PassesTest, OnlyAPerChannelBiasFoldsWithTheBatchNorm) {
  // Four channels and a convolution output four wide: a [4] bias broadcasts
  // along the width, one value per column, and must stay an addition.
  const Graph g = ConvBn(true, {4}, {1, 3, 6, 4});
  ASSERT_EQ(g.type(g.outputs()[0].tensor).dims.back(), 4);
  auto folded = FoldBatchNorm(g);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->changed, 0);
  // [1, 4, 1, 1] is per channel, as [4, 1, 1] is.
  const Graph nchw = ConvBn(true, {1, 4, 1, 1}, {1, 3, 6, 4});
  auto per_channel = FoldBatchNorm(nchw);
  ASSERT_TRUE(per_channel.ok()) << per_channel.status();
  EXPECT_EQ(per_channel->changed, 1);
  NumericCheck check = CompareGraphs(nchw, per_channel->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
}

TEST(PassesTest, WithoutValuesNothingFolds) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 3, 6, 6}));
  TensorRef y = *g.AddOp1(OpKind::kConv2D, {}, {x, g.AddWeight("w", F32({4, 3, 3, 3}))});
  std::vector<TensorRef> bn = {y};
  for (const char* n : {"s", "b", "m", "v"}) bn.push_back(g.AddWeight(n, F32({4})));
  g.AddOutput("y", *g.AddOp1(OpKind::kBatchNorm, {}, bn));
  auto folded = FoldBatchNorm(g);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(folded->changed, 0);
}

TEST(PassesTest, ConstantSubgraphsBecomeWeights) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 4}));
  TensorRef w1 = g.AddWeight("w1", F32({4, 3}), Data(F32({4, 3}), 0.1f, 0.2f));
  TensorRef w2 = g.AddWeight("w2", F32({4, 3}), Data(F32({4, 3}), -0.5f, 0.3f));
  OpParams axis1;
  axis1.axis = 1;
  TensorRef cat = *g.AddOp1(OpKind::kConcat, axis1, {w1, w2});
  g.AddOutput("y", *g.AddOp1(OpKind::kMatMul, {}, {x, cat}));
  auto folded = FoldConstants(g);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(folded->changed, 1);
  EXPECT_EQ(folded->graph.num_ops(), 1);
  NumericCheck check = CompareGraphs(g, folded->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
}

// Bytes of every weight's values: what an exported model stores.
int64_t WeightBytes(const Graph& g) {
  int64_t bytes = 0;
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kWeight && n.data) bytes += static_cast<int64_t>(n.data->size());
  }
  return bytes;
}

TEST(PassesTest, EqualComputedWeightsAreStoredOnce) {
  // Three steps, each with its own concat of the same two weights (what a
  // search leaves when the steps of an unrolled RNN share weights), and a
  // transpose of a transpose that equals w1 itself.
  Graph g;
  TensorRef w1 = g.AddWeight("w1", F32({4, 3}), Data(F32({4, 3}), 0.1f, 0.2f));
  TensorRef w2 = g.AddWeight("w2", F32({4, 3}), Data(F32({4, 3}), -0.5f, 0.3f));
  OpParams axis1;
  axis1.axis = 1;
  OpParams swap;
  swap.perm = {1, 0};
  TensorRef h = g.AddInput("h", F32({2, 4}));
  for (int step = 0; step < 3; ++step) {
    TensorRef cat = *g.AddOp1(OpKind::kConcat, axis1, {w1, w2});
    h = *g.AddOp1(OpKind::kTanh, {}, {*g.AddOp1(OpKind::kMatMul, {}, {h, cat})});
    h = *g.AddOp1(OpKind::kMatMul, {}, {h, *g.AddOp1(OpKind::kTranspose, swap, {cat})});
  }
  TensorRef back = *g.AddOp1(OpKind::kTranspose, swap, {*g.AddOp1(OpKind::kTranspose, swap, {w1})});
  g.AddOutput("y", *g.AddOp1(OpKind::kMatMul, {}, {h, back}));
  auto folded = FoldConstants(g);
  ASSERT_TRUE(folded.ok()) << folded.status();
  // One concat (96 bytes), one transposed concat (96) and w1 (48), which the
  // double transpose equals; w2 is only read through the concat, so it goes.
  // Without deduplication: 3 concats, 3 transposed ones and a w1 copy.
  EXPECT_EQ(WeightBytes(folded->graph), 96 + 96 + 48);
  int weights = 0;
  for (const Node& n : folded->graph.nodes()) weights += n.kind == OpKind::kWeight;
  EXPECT_EQ(weights, 3);
  NumericCheck check = CompareGraphs(g, folded->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
}

// matmul(x, concat(concat(w1, w2), w3)) taken apart by two splits, as a
// three-way shared-input merge leaves it; `read_middle` also reads the first
// split's (w1, w2) part elsewhere.
Graph SplitChain(bool read_middle) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 4}));
  OpParams axis1;
  axis1.axis = 1;
  std::vector<TensorRef> w;
  for (int i = 0; i < 3; ++i) w.push_back(g.AddWeight("w" + std::to_string(i), F32({4, 4}), Data(F32({4, 4}), 0.1f * i, 0.2f)));
  TensorRef cat = *g.AddOp1(OpKind::kConcat, axis1, {*g.AddOp1(OpKind::kConcat, axis1, {w[0], w[1]}), w[2]});
  auto outer = *g.AddOp(OpKind::kSplit, axis1, {*g.AddOp1(OpKind::kMatMul, {}, {x, cat})});
  auto inner = *g.AddOp(OpKind::kSplit, axis1, {outer[0]});
  for (TensorRef part : {inner[0], inner[1], outer[1]}) {
    g.AddOutput("y" + std::to_string(g.outputs().size()), *g.AddOp1(OpKind::kTanh, {}, {part}));
  }
  if (read_middle) g.AddOutput("middle", *g.AddOp1(OpKind::kRelu, {}, {outer[0]}));
  return g;
}

int Splits(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == OpKind::kSplit;
  return n;
}

TEST(PassesTest, AChainOfSplitsBecomesOneSplit) {
  const Graph g = SplitChain(false);
  ASSERT_EQ(Splits(g), 2);
  auto flat = FlattenSplits(g);
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(flat->changed, 1);
  ASSERT_EQ(Splits(flat->graph), 1);
  for (const Node& n : flat->graph.nodes()) {
    if (n.kind == OpKind::kSplit) {
      EXPECT_EQ(n.params.sizes, (std::vector<int64_t>{4, 4, 4}));
    }
  }
  NumericCheck check = CompareGraphs(g, flat->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
  auto again = FlattenSplits(flat->graph);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->changed, 0);
}

TEST(PassesTest, ASplitPartReadElsewhereStaysWhole) {
  const Graph g = SplitChain(true);
  auto flat = FlattenSplits(g);
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(flat->changed, 0);
  EXPECT_EQ(Splits(flat->graph), 2);
}

OpParams Transpose(std::vector<int> perm, bool shuffle) {
  OpParams p;
  p.perm = std::move(perm);
  p.shuffle = shuffle;
  return p;
}

int Transposes(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == OpKind::kTranspose;
  return n;
}

// matmul(transpose(transpose(x)), w) as equal-cost rewrites leave it, a pair
// of 3-D transposes that do not cancel, and a cancelling pair that is an output.
Graph TransposePairs() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 8}));
  TensorRef w = g.AddWeight("w", F32({8, 4}), Data(F32({8, 4}), 0.1f, 0.3f));
  TensorRef copy = *g.AddOp1(OpKind::kTranspose, Transpose({1, 0}, true), {x});
  TensorRef view = *g.AddOp1(OpKind::kTranspose, Transpose({1, 0}, false), {copy});
  g.AddOutput("y", *g.AddOp1(OpKind::kMatMul, {}, {view, w}));
  TensorRef z = g.AddInput("z", F32({2, 3, 4}));
  TensorRef once = *g.AddOp1(OpKind::kTranspose, Transpose({1, 2, 0}, true), {z});
  g.AddOutput("rotated", *g.AddOp1(OpKind::kRelu, {}, {*g.AddOp1(OpKind::kTranspose, Transpose({1, 2, 0}, true), {once})}));
  TensorRef there = *g.AddOp1(OpKind::kTranspose, Transpose({2, 0, 1}, true), {z});
  g.AddOutput("back", *g.AddOp1(OpKind::kTranspose, Transpose({1, 2, 0}, true), {there}));
  return g;
}

TEST(PassesTest, TransposePairsThatCancelAreRemoved) {
  const Graph g = TransposePairs();
  ASSERT_EQ(Transposes(g), 6);
  auto removed = RemoveTransposePairs(g);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->changed, 1);
  // The matmul's pair is gone; the rotation (twice by (1,2,0) is (2,0,1)) and
  // the pair that is a graph output stay.
  EXPECT_EQ(Transposes(removed->graph), 4);
  for (const Node& n : removed->graph.nodes()) {
    if (n.kind == OpKind::kMatMul) EXPECT_EQ(removed->graph.node(n.inputs[0].node).kind, OpKind::kInput);
  }
  NumericCheck check = CompareGraphs(g, removed->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
  auto again = RemoveTransposePairs(removed->graph);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->changed, 0);
}

TEST(NumericCheckTest, CatchesADifferenceEvenBehindAnOpaqueOperator) {
  auto build = [](bool relu) {
    Graph g;
    TensorRef x = g.AddInput("x", F32({2, 4}));
    TensorRef v = relu ? *g.AddOp1(OpKind::kRelu, {}, {x}) : *g.AddOp1(OpKind::kTanh, {}, {x});
    OpParams op;
    op.opaque.op_type = "LayerNormalization";
    op.opaque.output_types = {F32({2, 4})};
    g.AddOutput("y", *g.AddOp1(OpKind::kOpaque, op, {v}));
    return g;
  };
  NumericCheck same = CompareGraphs(build(true), build(true));
  EXPECT_TRUE(same.ran && same.equal) << same.reason;
  NumericCheck differ = CompareGraphs(build(true), build(false));
  EXPECT_TRUE(differ.ran);
  EXPECT_FALSE(differ.equal);
  EXPECT_NE(differ.reason.find("output y"), std::string::npos) << differ.reason;
}

TEST(NumericCheckTest, UnknownShapesMeanNoVerdict) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 4}));
  OpParams op;
  op.opaque.op_type = "NonZero";
  op.opaque.output_types = {TensorType::RowMajor(DType::kInt64, {2, -1})};
  g.AddOutput("y", *g.AddOp1(OpKind::kOpaque, op, {x}));
  NumericCheck check = CompareGraphs(g, g);
  EXPECT_FALSE(check.ran);
  EXPECT_NE(check.reason.find("unknown shape"), std::string::npos) << check.reason;
}

}  // namespace
}  // namespace taso::optimizer
