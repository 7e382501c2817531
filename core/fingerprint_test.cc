#include "core/fingerprint.h"

#include "gtest/gtest.h"
#include "testing/tensors.h"

namespace taso {
namespace {

IntTensor Make(std::vector<int64_t> dims, std::vector<int32_t> data) {
  return ::taso::testing::IntTensorOf(std::move(dims), std::move(data));
}

TEST(Fingerprint, InvariantUnderOutputPermutation) {
  const IntTensor a = Make({2, 2}, {1, 2, 3, 4});
  const IntTensor b = Make({4}, {5, 6, 7, 8});
  const IntTensor c = Make({1}, {9});
  const Fingerprint abc = GraphFingerprint({a, b, c});
  EXPECT_EQ(GraphFingerprint({c, a, b}), abc);
  EXPECT_EQ(GraphFingerprint({b, c, a}), abc);
  EXPECT_NE(GraphFingerprint({a, b}), abc);
  EXPECT_NE(GraphFingerprint({a, b, c, c}), abc);
}

TEST(Fingerprint, SensitiveToOneElement) {
  IntTensor a = Make({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Fingerprint base = GraphFingerprint({a});
  for (size_t i = 0; i < a.data.size(); ++i) {
    IntTensor changed = a;
    changed.data[i] += 1;
    EXPECT_NE(GraphFingerprint({changed}), base) << "element " << i;
    changed.data[i] = a.data[i] ^ static_cast<int32_t>(0x80000000u);
    EXPECT_NE(GraphFingerprint({changed}), base) << "element " << i << " high bit";
  }
}

TEST(Fingerprint, SensitiveToShapeLayoutAndSplit) {
  const IntTensor a = Make({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Fingerprint base = TensorFingerprint(a);
  EXPECT_NE(TensorFingerprint(Make({4, 2}, a.data)), base);
  IntTensor strided = a;
  strided.type.strides = {1, 2};
  EXPECT_NE(TensorFingerprint(strided), base);
  IntTensor split = a;
  split.type.split[1] = MakeSplit(2, nullptr, nullptr);
  EXPECT_NE(TensorFingerprint(split), base);
  IntTensor split3 = a;
  split3.type.split[1] = MakeSplit(3, nullptr, nullptr);
  EXPECT_NE(TensorFingerprint(split3), TensorFingerprint(split));
}

TEST(Fingerprint, EqualValuesEqualFingerprints) {
  EXPECT_EQ(TensorFingerprint(Make({3}, {1, 2, 3})), TensorFingerprint(Make({3}, {1, 2, 3})));
  // The two lanes are not trivially related.
  const Fingerprint f = TensorFingerprint(Make({3}, {1, 2, 3}));
  EXPECT_NE(f.hi, f.lo);
  EXPECT_EQ(f.ToHex().size(), 32u);
  EXPECT_EQ(f.ToBytes().size(), 16u);
}

}  // namespace
}  // namespace taso
