// The numerical check's opaque stand-in and its seeds.
#include "optimizer/passes/numeric_check.h"

#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso::optimizer {
namespace {

using ::taso::testing::F32;

OpParams Opaque(const TensorType& out) {
  OpParams op;
  op.opaque.op_type = "LayerNormalization";
  op.opaque.output_types = {out};
  return op;
}

// w (small values, two of them swapped when `swap`) -> opaque -> y. Small
// values: a stand-in that only sums its input with position weights and
// damps the sum moves the output by far less than the tolerance here.
Graph WeightIntoOpaque(bool swap) {
  std::vector<float> v(16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * static_cast<float>(i + 1);
  if (swap) std::swap(v[3], v[11]);
  auto data = std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  Graph g;
  TensorRef w = g.AddWeight("w", F32({4, 4}), data);
  g.AddOutput("y", *g.AddOp1(OpKind::kOpaque, Opaque(F32({4, 4})), {w}));
  return g;
}

TEST(NumericCheckTest, StandInSeesTwoElementsSwapped) {
  NumericCheck same = CompareGraphs(WeightIntoOpaque(false), WeightIntoOpaque(false));
  EXPECT_TRUE(same.ran && same.equal) << same.reason;
  NumericCheck swapped = CompareGraphs(WeightIntoOpaque(false), WeightIntoOpaque(true));
  EXPECT_TRUE(swapped.ran);
  EXPECT_FALSE(swapped.equal) << swapped.reason;
}

// x -> [transpose] -> opaque -> y: the same elements, in other places.
Graph TransposeBeforeOpaque(bool transpose, const TensorType& opaque_out) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({4, 4}));
  if (transpose) {
    OpParams p;
    p.perm = {1, 0};
    x = *g.AddOp1(OpKind::kTranspose, p, {x});
  }
  g.AddOutput("y", *g.AddOp1(OpKind::kOpaque, Opaque(opaque_out), {x}));
  return g;
}

TEST(NumericCheckTest, StandInSeesATransposeInsertedBeforeIt) {
  // Also when the opaque output is smaller than its input (a reduction):
  // then the transpose shows only through the position-weighted sum.
  for (const TensorType& out : {F32({4, 4}), F32({1})}) {
    NumericCheck same = CompareGraphs(TransposeBeforeOpaque(false, out), TransposeBeforeOpaque(false, out));
    EXPECT_TRUE(same.ran && same.equal) << same.reason;
    NumericCheck moved = CompareGraphs(TransposeBeforeOpaque(false, out), TransposeBeforeOpaque(true, out));
    EXPECT_TRUE(moved.ran);
    EXPECT_FALSE(moved.equal) << out.ToString() << ": " << moved.reason;
  }
}

TEST(NumericCheckTest, StandInSeesAScaledInput) {
  // asinh compresses large values but is not blind to scale.
  auto build = [](float factor) {
    Graph g;
    TensorRef x = g.AddInput("x", F32({8}));
    std::vector<float> v(8, factor);
    auto data = std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    TensorRef scaled = *g.AddOp1(OpKind::kEwMul, {}, {x, g.AddWeight("k", F32({8}), data)});
    g.AddOutput("y", *g.AddOp1(OpKind::kOpaque, Opaque(F32({8})), {scaled}));
    return g;
  };
  NumericCheck check = CompareGraphs(build(100), build(200));
  EXPECT_TRUE(check.ran);
  EXPECT_FALSE(check.equal) << check.reason;
}

// An attention mask: -inf where a position is hidden, fed to an opaque
// operator (Softmax). The stand-in stays finite and still sees where the
// -inf sits.
Graph MaskIntoOpaque(int hidden) {
  std::vector<float> v(8, 0.f);
  v[hidden] = -std::numeric_limits<float>::infinity();
  auto data = std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  Graph g;
  TensorRef x = g.AddInput("x", F32({8}));
  TensorRef masked = *g.AddOp1(OpKind::kEwAdd, {}, {x, g.AddWeight("mask", F32({8}), data)});
  g.AddOutput("y", *g.AddOp1(OpKind::kOpaque, Opaque(F32({8})), {masked}));
  return g;
}

TEST(NumericCheckTest, StandInIsFiniteOnAMaskAndSeesWhereItIs) {
  NumericCheck same = CompareGraphs(MaskIntoOpaque(2), MaskIntoOpaque(2));
  EXPECT_TRUE(same.ran && same.equal) << same.reason;
  NumericCheck moved = CompareGraphs(MaskIntoOpaque(2), MaskIntoOpaque(5));
  EXPECT_TRUE(moved.ran);
  EXPECT_FALSE(moved.equal) << moved.reason;
  EXPECT_EQ(moved.reason.find("nan"), std::string::npos) << moved.reason;
}

TEST(NumericCheckTest, TheSeedFixesTheInputs) {
  Graph g;
  g.AddInput("x", F32({2, 8}));
  const Node& x = g.node(0);
  auto values = [&](uint64_t seed, int set) {
    auto v = CheckInputValue(x, seed, set);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? v->data : std::vector<float>{};
  };
  EXPECT_EQ(values(7, 0), values(7, 0));
  EXPECT_EQ(values(7, 1), values(7, 1));
  EXPECT_NE(values(7, 0), values(8, 0));
  EXPECT_NE(values(7, 0), values(7, 1));  // the input sets of one check differ
  EXPECT_NE(values(7, 1), values(8, 0));  // and are not another seed's sets shifted
  EXPECT_EQ(values(0, 0), values(kDefaultCheckSeed, 0));

  // Weights keep their values whatever the seed.
  std::vector<float> w = {1, 2, 3};
  Graph h;
  h.AddWeight("w", F32({3}),
              std::make_shared<const std::string>(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  EXPECT_EQ(CheckInputValue(h.node(0), 5, 1)->data, w);

  NumericCheckOptions options;
  options.seed = 7;
  EXPECT_EQ(CompareGraphs(g, g, options).seed, 7u);
  EXPECT_EQ(CompareGraphs(g, g).seed, kDefaultCheckSeed);  // a zero seed is the default, and says so
}

}  // namespace
}  // namespace taso::optimizer
