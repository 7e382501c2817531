// The numerical check's opaque stand-in.
#include "optimizer/numeric_check.h"

#include <cstring>
#include <memory>
#include <utility>

#include "gtest/gtest.h"

namespace taso::optimizer {
namespace {

TensorType F32(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kFloat32, std::move(dims)); }

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

}  // namespace
}  // namespace taso::optimizer
