#include "core/random_inputs.h"

#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso {
namespace {

using ::taso::testing::F32;

TEST(RandomInputs, DeterministicPerNameAndSeed) {
  const TensorType t = F32({4, 4});
  EXPECT_EQ(DeterministicIntTensor(t, "x", 1).data, DeterministicIntTensor(t, "x", 1).data);
  EXPECT_NE(DeterministicIntTensor(t, "x", 1).data, DeterministicIntTensor(t, "y", 1).data);
  EXPECT_NE(DeterministicIntTensor(t, "x", 1).data, DeterministicIntTensor(t, "x", 2).data);
}

TEST(RandomInputs, FloatsInRangeAndSpread) {
  const FloatTensor f = DeterministicFloatTensor(F32({1000}), "x", 3);
  float lo = 1, hi = -1;
  for (float v : f.data) {
    ASSERT_GE(v, -1.f);
    ASSERT_LE(v, 1.f);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_LT(lo, -0.9f);
  EXPECT_GT(hi, 0.9f);
}

TEST(RandomInputs, IntsUseTheWholeRange) {
  const IntTensor t = DeterministicIntTensor(F32({1000}), "w", 5);
  int negative = 0, large = 0;
  for (int32_t v : t.data) {
    negative += v < 0;
    large += v > (1 << 30) || v < -(1 << 30);
  }
  EXPECT_GT(negative, 400);
  EXPECT_GT(large, 400);
}

TEST(RandomInputs, FeedsCoverInputsAndWeights) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 4}));
  TensorRef w = g.AddWeight("w", F32({4, 4}));
  g.AddOutput("y", *g.AddOp1(OpKind::kMatMul, OpParams{}, {x, w}));
  auto feeds = DeterministicIntFeeds(g, 9);
  ASSERT_EQ(feeds.size(), 2u);
  EXPECT_EQ(feeds["w"].data.size(), 16u);
  EXPECT_TRUE(EvaluateInt(g, feeds).ok());
  EXPECT_TRUE(EvaluateFloat(g, DeterministicFloatFeeds(g, 9)).ok());
}

}  // namespace
}  // namespace taso
