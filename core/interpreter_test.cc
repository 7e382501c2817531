// Reference interpreters, operator by operator, in both value domains
// (int32 with wrap-around and float32), against small hand-computed values.
// Expected numbers are written out literally; nothing here re-implements an
// operator.
#include "core/interpreter.h"

#include <cstring>
#include <memory>

#include "testing/interpreter_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

using namespace ::taso::testing_util;  // NOLINT: test helpers
using ::testing::HasSubstr;

// ---------------------------------------------------------------- elementwise

TEST(EwAdd, SameShape) {
  ExpectBoth(OpKind::kEwAdd, {}, {IT({2, 2}, {1, 2, 3, 4}), IT({2, 2}, {10, 20, 30, 40})}, {2, 2},
             {11, 22, 33, 44});
  FloatTensor a = FT({3}, {0.5f, -1.25f, 2.f}), b = FT({3}, {0.25f, 1.f, -3.5f});
  EXPECT_THAT(EvalF1(OpKind::kEwAdd, {}, {&a, &b}).data, Near({0.75f, -0.25f, -1.5f}));
}

TEST(EwMul, SameShape) {
  ExpectBoth(OpKind::kEwMul, {}, {IT({2, 2}, {1, 2, 3, 4}), IT({2, 2}, {5, 6, 7, -8})}, {2, 2},
             {5, 12, 21, -32});
  FloatTensor a = FT({3}, {0.5f, -1.5f, 2.f}), b = FT({3}, {4.f, 2.f, 0.25f});
  EXPECT_THAT(EvalF1(OpKind::kEwMul, {}, {&a, &b}).data, Near({2.f, -3.f, 0.5f}));
}

TEST(EwAdd, Broadcast) {
  // (2,3) + (3): the row is added to every row.
  ExpectBoth(OpKind::kEwAdd, {}, {IT({2, 3}, {1, 2, 3, 4, 5, 6}), IT({3}, {10, 20, 30})}, {2, 3},
             {11, 22, 33, 14, 25, 36});
  // (3) + (2,3): operand order does not matter.
  ExpectBoth(OpKind::kEwAdd, {}, {IT({3}, {10, 20, 30}), IT({2, 3}, {1, 2, 3, 4, 5, 6})}, {2, 3},
             {11, 22, 33, 14, 25, 36});
  // (2,1) + (1,3) -> (2,3): both operands broadcast.
  ExpectBoth(OpKind::kEwAdd, {}, {IT({2, 1}, {1, 2}), IT({1, 3}, {10, 20, 30})}, {2, 3},
             {11, 21, 31, 12, 22, 32});
  FloatTensor a = FT({2, 3}, {0.5f, 1.f, 1.5f, 2.f, 2.5f, 3.f}), b = FT({3}, {1.f, 2.f, 3.f});
  FloatTensor o = EvalF1(OpKind::kEwAdd, {}, {&a, &b});
  EXPECT_EQ(o.type.dims, (Dims{2, 3}));
  EXPECT_THAT(o.data, Near({1.5f, 3.f, 4.5f, 3.f, 4.5f, 6.f}));
}

TEST(EwMul, Broadcast) {
  // (2,3) * (2,1): each row scaled by its own factor.
  ExpectBoth(OpKind::kEwMul, {}, {IT({2, 3}, {1, 2, 3, 4, 5, 6}), IT({2, 1}, {2, 3})}, {2, 3},
             {2, 4, 6, 12, 15, 18});
  // (2,3) * (3)
  ExpectBoth(OpKind::kEwMul, {}, {IT({2, 3}, {1, 2, 3, 4, 5, 6}), IT({3}, {1, -1, 2})}, {2, 3},
             {1, -2, 6, 4, -5, 12});
  FloatTensor a = FT({2, 3}, {1, 2, 3, 4, 5, 6}), b = FT({3}, {0.5f, 2.f, -1.f});
  EXPECT_THAT(EvalF1(OpKind::kEwMul, {}, {&a, &b}).data, Near({0.5f, 4.f, -3.f, 2.f, 10.f, -6.f}));
}

TEST(ScalarMul, TensorTimesScalar) {
  ExpectBoth(OpKind::kScalarMul, {}, {IT({2, 2}, {1, -2, 3, 4}), IT({}, {3})}, {2, 2}, {3, -6, 9, 12});
  FloatTensor x = FT({2, 2}, {1.5f, -2.f, 0.25f, 4.f}), s = FT({}, {2.f});
  FloatTensor o = EvalF1(OpKind::kScalarMul, {}, {&x, &s});
  EXPECT_EQ(o.type, x.type);
  EXPECT_THAT(o.data, Near({3.f, -4.f, 0.5f, 8.f}));
}

TEST(IntWrapAround, EwAddOverflows) {
  IntTensor a = IT({3}, {kIntMax, kIntMin, 2000000000});
  IntTensor b = IT({3}, {1, -1, 2000000000});
  // 2^31-1 + 1 = -2^31; -2^31 - 1 = 2^31-1; 4e9 - 2^32 = -294967296.
  EXPECT_EQ(EvalI1(OpKind::kEwAdd, {}, {&a, &b}).data, (IV{kIntMin, kIntMax, -294967296}));
  EXPECT_EQ(EvalI1(OpKind::kEwAdd, {}, {&a, &b}).data[0], -2147483648LL);
}

TEST(IntWrapAround, MultiplicationOverflows) {
  // 65536^2 = 2^32 -> 0; 65537^2 = 2^32 + 131073 -> 131073;
  // (2^31-1)*2 = 2^32 - 2 -> -2; 46341^2 = 2147488281 -> -2147479015.
  IntTensor a = IT({4}, {65536, 65537, kIntMax, 46341});
  IntTensor b = IT({4}, {65536, 65537, 2, 46341});
  EXPECT_EQ(EvalI1(OpKind::kEwMul, {}, {&a, &b}).data, (IV{0, 131073, -2, -2147479015}));
  // Scalar multiplication: 2^30 * 3 = 3221225472 -> -1073741824; 2^30 * 4 -> 0.
  IntTensor x = IT({2}, {1073741824, -1073741824}), s = IT({}, {3});
  EXPECT_EQ(EvalI1(OpKind::kScalarMul, {}, {&x, &s}).data, (IV{-1073741824, 1073741824}));
  // Matmul accumulates with wrap-around: (2^31-1)*1 + 1*1 = -2^31.
  IntTensor m = IT({1, 2}, {kIntMax, 1}), w = IT({2, 1}, {1, 1});
  EXPECT_EQ(EvalI1(OpKind::kMatMul, {}, {&m, &w}).data, (IV{kIntMin}));
}

// ---------------------------------------------------------------- activations

TEST(Relu, IntDefaultIsMax) {
  IntTensor x = IT({5}, {-3, 0, 2, -1, 7});
  EXPECT_EQ(EvalI1(OpKind::kRelu, {}, {&x}).data, (IV{0, 0, 2, 0, 7}));
}

TEST(Relu, IntPolynomial) {
  IntOptions poly;
  poly.relu_as_polynomial = true;
  // x*(x+1)+1: -3 -> 7, 0 -> 1, 2 -> 7, -1 -> 1, 7 -> 57, and
  // 65536 -> 65536*65537+1 = 2^32+65537 -> 65537 (wraps).
  IntTensor x = IT({6}, {-3, 0, 2, -1, 7, 65536});
  IntTensor o = EvalI1(OpKind::kRelu, {}, {&x}, poly);
  EXPECT_EQ(o.data, (IV{7, 1, 7, 1, 57, 65537}));
  EXPECT_EQ(o.type, x.type);
}

TEST(Relu, Float) {
  FloatTensor x = FT({4}, {-1.5f, 0.f, 2.5f, -0.f});
  EXPECT_THAT(EvalF1(OpKind::kRelu, {}, {&x}).data, Near({0.f, 0.f, 2.5f, 0.f}));
}

TEST(Tanh, FloatAndIntUnimplemented) {
  FloatTensor x = FT({3}, {0.f, 1.f, -1.f});
  EXPECT_THAT(EvalF1(OpKind::kTanh, {}, {&x}).data, Near({0.f, 0.76159416f, -0.76159416f}));
  IntTensor xi = IT({3}, {0, 1, -1});
  auto r = EvalOpInt(OpKind::kTanh, {}, {&xi});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(Sigmoid, FloatAndIntUnimplemented) {
  FloatTensor x = FT({3}, {0.f, 1.f, -2.f});
  EXPECT_THAT(EvalF1(OpKind::kSigmoid, {}, {&x}).data, Near({0.5f, 0.73105858f, 0.11920292f}));
  IntTensor xi = IT({3}, {0, 1, -2});
  auto r = EvalOpInt(OpKind::kSigmoid, {}, {&xi});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// ---------------------------------------------------------------- transpose

TEST(Transpose, TwoD) {
  // [[1,2,3],[4,5,6]]^T = [[1,4],[2,5],[3,6]]
  ExpectBoth(OpKind::kTranspose, Perm({1, 0}), {IT({2, 3}, {1, 2, 3, 4, 5, 6})}, {3, 2}, {1, 4, 2, 5, 3, 6});
  IntTensor x = IT({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(EvalI1(OpKind::kTranspose, Perm({1, 0}), {&x}).type.strides, (Dims{2, 1}));
}

TEST(Transpose, ThreeD) {
  // x[i][j][k] = 6i + 3j + k, dims (2,2,3). perm (2,0,1): out[a][b][c] = x[b][c][a] = 6b + 3c + a.
  IntTensor x = IT({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  ExpectBoth(OpKind::kTranspose, Perm({2, 0, 1}), {x}, {3, 2, 2}, {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  // perm (0,2,1): out[i][k][j] = x[i][j][k].
  ExpectBoth(OpKind::kTranspose, Perm({0, 2, 1}), {x}, {2, 3, 2}, {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11});
  // perm (1,0,2): out[j][i][k] = x[i][j][k].
  ExpectBoth(OpKind::kTranspose, Perm({1, 0, 2}), {x}, {2, 2, 3}, {0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11});
}

TEST(Transpose, NoShuffleKeepsValuesAndPermutesStrides) {
  IntTensor x = IT({2, 3}, {1, 2, 3, 4, 5, 6});
  IntTensor o = EvalI1(OpKind::kTranspose, Perm({1, 0}, /*shuffle=*/false), {&x});
  EXPECT_EQ(o.type.dims, (Dims{3, 2}));
  EXPECT_EQ(o.type.strides, (Dims{1, 3}));  // x's strides (3,1) permuted
  EXPECT_FALSE(o.type.is_row_major());
  EXPECT_EQ(o.data, (IV{1, 4, 2, 5, 3, 6}));  // values are logical, row-major order
  FloatTensor xf = ToF(x);
  FloatTensor of = EvalF1(OpKind::kTranspose, Perm({1, 0}, false), {&xf});
  EXPECT_EQ(of.type.strides, (Dims{1, 3}));
  EXPECT_THAT(of.data, Near({1, 4, 2, 5, 3, 6}));

  // 3-D: strides of (2,2,3) are (6,3,1); perm (2,0,1) gives (1,6,3).
  IntTensor y = IT({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  IntTensor oy = EvalI1(OpKind::kTranspose, Perm({2, 0, 1}, false), {&y});
  EXPECT_EQ(oy.type.strides, (Dims{1, 6, 3}));
  EXPECT_EQ(oy.data, (IV{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));

  // A strided tensor combines with a row-major one by logical position.
  IntTensor r = IT({3, 2}, {10, 20, 30, 40, 50, 60});
  IntTensor sum = EvalI1(OpKind::kEwAdd, {}, {&o, &r});
  EXPECT_EQ(sum.data, (IV{11, 24, 32, 45, 53, 66}));
  EXPECT_TRUE(sum.type.is_row_major());
  // Transposing the view back permutes (1,3) to (3,1): x's row-major type again.
  IntTensor back = EvalI1(OpKind::kTranspose, Perm({1, 0}, false), {&o});
  EXPECT_EQ(back.type, x.type);
  EXPECT_EQ(back.data, x.data);
}

// ---------------------------------------------------------------- matmul

TEST(MatMul, TwoD) {
  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  ExpectBoth(OpKind::kMatMul, {}, {IT({2, 3}, {1, 2, 3, 4, 5, 6}), IT({3, 2}, {7, 8, 9, 10, 11, 12})}, {2, 2},
             {58, 64, 139, 154});
  FloatTensor a = FT({1, 2}, {0.5f, -1.f}), b = FT({2, 2}, {2.f, 0.25f, 1.5f, 4.f});
  // [0.5*2 - 1*1.5, 0.5*0.25 - 1*4] = [-0.5, -3.875]
  EXPECT_THAT(EvalF1(OpKind::kMatMul, {}, {&a, &b}).data, Near({-0.5f, -3.875f}));
}

TEST(MatMul, Batched) {
  // batch 0: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]
  // batch 1: [[-1,0],[2,1]] x [[1,2],[3,-4]] = [[-1,-2],[5,0]]
  IntTensor x = IT({2, 2, 2}, {1, 2, 3, 4, -1, 0, 2, 1});
  ExpectBoth(OpKind::kMatMul, {}, {x, IT({2, 2, 2}, {5, 6, 7, 8, 1, 2, 3, -4})}, {2, 2, 2},
             {19, 22, 43, 50, -1, -2, 5, 0});
  // A 2-D right operand is broadcast over the batch:
  // batch 1: [[-1,0],[2,1]] x [[5,6],[7,8]] = [[-5,-6],[17,20]]
  ExpectBoth(OpKind::kMatMul, {}, {x, IT({2, 2}, {5, 6, 7, 8})}, {2, 2, 2}, {19, 22, 43, 50, -5, -6, 17, 20});
}

TEST(MatMul, ReluActivation) {
  // [[1,2],[3,4]] x [[1,-1],[-1,1]] = [[-1,1],[-1,1]]
  IntTensor x = IT({2, 2}, {1, 2, 3, 4}), w = IT({2, 2}, {1, -1, -1, 1});
  EXPECT_EQ(EvalI1(OpKind::kMatMul, {}, {&x, &w}).data, (IV{-1, 1, -1, 1}));
  EXPECT_EQ(EvalI1(OpKind::kMatMul, WithActivation(Activation::kRelu), {&x, &w}).data, (IV{0, 1, 0, 1}));
  IntOptions poly;
  poly.relu_as_polynomial = true;
  // -1 -> 1, 1 -> 3
  EXPECT_EQ(EvalI1(OpKind::kMatMul, WithActivation(Activation::kRelu), {&x, &w}, poly).data, (IV{1, 3, 1, 3}));
  FloatTensor xf = ToF(x), wf = ToF(w);
  EXPECT_THAT(EvalF1(OpKind::kMatMul, WithActivation(Activation::kRelu), {&xf, &wf}).data, Near({0, 1, 0, 1}));
}

TEST(MatMul, TanhAndSigmoidActivationsFloatOnly) {
  IntTensor x = IT({2, 2}, {1, 2, 3, 4}), w = IT({2, 2}, {1, -1, -1, 1});
  FloatTensor xf = ToF(x), wf = ToF(w);
  EXPECT_THAT(EvalF1(OpKind::kMatMul, WithActivation(Activation::kTanh), {&xf, &wf}).data,
              Near({-0.76159416f, 0.76159416f, -0.76159416f, 0.76159416f}));
  EXPECT_THAT(EvalF1(OpKind::kMatMul, WithActivation(Activation::kSigmoid), {&xf, &wf}).data,
              Near({0.26894142f, 0.73105858f, 0.26894142f, 0.73105858f}));
  for (Activation a : {Activation::kTanh, Activation::kSigmoid}) {
    auto r = EvalOpInt(OpKind::kMatMul, WithActivation(a), {&x, &w});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  }
}

// ---------------------------------------------------------------- conv2d

TEST(Conv2D, OneByOne) {
  // x channels c0=[1,2,3,4], c1=[5,6,7,8]; oc0 = c0+c1, oc1 = 2c0-c1, oc2 = 3c1.
  IntTensor x = IT({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  IntTensor w = IT({3, 2, 1, 1}, {1, 1, 2, -1, 0, 3});
  ExpectBoth(OpKind::kConv2D, {}, {x, w}, {1, 3, 2, 2}, {6, 8, 10, 12, -3, -2, -1, 0, 15, 18, 21, 24});
}

TEST(Conv2D, ThreeByThreeSameStride1) {
  // w = [[1,2,0],[0,1,0],[0,0,-1]] (cross-correlation, not flipped):
  // out[y][x] = x[y-1][x-1] + 2 x[y-1][x] + x[y][x] - x[y+1][x+1].
  IntTensor x = IT({1, 1, 3, 3}, kNine);
  IntTensor w = IT({1, 1, 3, 3}, {1, 2, 0, 0, 1, 0, 0, 0, -1});
  ExpectBoth(OpKind::kConv2D, ConvParams(1, Padding::kSame), {x, w}, {1, 1, 3, 3}, {-4, -4, 3, -2, 1, 14, 15, 22, 26});
}

TEST(Conv2D, ThreeByThreeSameStride2On5x5) {
  // x[i][j] = 5i+j+1; out 3x3, total pad 2, pad_before 1:
  // out[oy][ox] = x[2oy-1][2ox-1] + 10 x[2oy+1][2ox+1] (w: 1 top-left, 10 bottom-right).
  IntTensor x = IT({1, 1, 5, 5}, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                  14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25});
  IntTensor w = IT({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 10});
  ExpectBoth(OpKind::kConv2D, ConvParams(2, Padding::kSame), {x, w}, {1, 1, 3, 3}, {70, 90, 0, 170, 197, 9, 0, 17, 19});
}

TEST(Conv2D, SameStride2OddTotalPadPutsSmallerHalfBefore) {
  // 4x4, k=3, s=2: out 2x2, total pad (2-1)*2+3-4 = 1, pad_before 0 (the extra row/column goes after).
  // x[i][j] = 4i+j+1; out[oy][ox] = x[2oy][2ox] + 10 x[2oy+2][2ox+2] (zero past the end).
  IntTensor x = IT({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  IntTensor w = IT({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 10});
  ExpectBoth(OpKind::kConv2D, ConvParams(2, Padding::kSame), {x, w}, {1, 1, 2, 2}, {111, 3, 9, 11});
  // Max pool with the same geometry: windows rows/cols {0,1,2} and {2,3}.
  OpParams p = Kernel(3, 3);
  p.stride_h = p.stride_w = 2;
  ExpectBoth(OpKind::kPoolMax, p, {x}, {1, 1, 2, 2}, {11, 12, 15, 16});
}

TEST(Conv2D, Valid) {
  // 2x2 kernel [[1,2],[3,4]] on 1..9, VALID stride 1 -> 2x2.
  IntTensor x = IT({1, 1, 3, 3}, kNine);
  ExpectBoth(OpKind::kConv2D, ConvParams(1, Padding::kValid), {x, IT({1, 1, 2, 2}, {1, 2, 3, 4})}, {1, 1, 2, 2},
             {37, 47, 67, 77});
  // 3x3 VALID stride 2 on 5x5 -> 2x2: out = x[2oy][2ox] + 10 x[2oy+2][2ox+2].
  IntTensor x5 = IT({1, 1, 5, 5}, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25});
  ExpectBoth(OpKind::kConv2D, ConvParams(2, Padding::kValid), {x5, IT({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 10})},
             {1, 1, 2, 2}, {131, 153, 241, 263});
}

TEST(Conv2D, GroupedTwoGroups) {
  // 4 input channels, weight (2,2,1,1): groups = 2.
  // oc0 = 1*c0 + 10*c1, oc1 = 100*c2 + 1000*c3.
  IntTensor x = IT({1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  ExpectBoth(OpKind::kConv2D, {}, {x, IT({2, 2, 1, 1}, {1, 10, 100, 1000})}, {1, 2, 1, 2}, {31, 42, 7500, 8600});
  // Two output channels per group: oc0 = c0, oc1 = c1, oc2 = c2+c3, oc3 = 2c2-c3.
  ExpectBoth(OpKind::kConv2D, {}, {x, IT({4, 2, 1, 1}, {1, 0, 0, 1, 1, 1, 2, -1})}, {1, 4, 1, 2},
             {1, 2, 3, 4, 12, 14, 3, 4});
}

TEST(Conv2D, Depthwise3x3) {
  // c0 = 1..9 with a centre-2 kernel (2x), c1 = 10..90 with an all-ones kernel (box sums).
  IntTensor x = IT({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  IntTensor w = IT({2, 1, 3, 3}, {0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  ExpectBoth(OpKind::kConv2D, {}, {x, w}, {1, 2, 3, 3},
             {2, 4, 6, 8, 10, 12, 14, 16, 18, 120, 210, 160, 270, 450, 330, 240, 390, 280});
}

TEST(Conv2D, FusedRelu) {
  IntTensor x = IT({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  IntTensor w = IT({3, 2, 1, 1}, {1, 1, 2, -1, 0, 3});
  const OpParams relu = ConvParams(1, Padding::kSame, Activation::kRelu);
  // pre-activation: [6,8,10,12, -3,-2,-1,0, 15,18,21,24]
  ExpectBoth(OpKind::kConv2D, relu, {x, w}, {1, 3, 2, 2}, {6, 8, 10, 12, 0, 0, 0, 0, 15, 18, 21, 24});
  IntOptions poly;
  poly.relu_as_polynomial = true;
  EXPECT_EQ(EvalI1(OpKind::kConv2D, relu, {&x, &w}, poly).data,
            (IV{43, 73, 111, 157, 7, 3, 1, 1, 241, 343, 463, 601}));
}

TEST(Conv2D, TanhAndSigmoidActivationsFloatOnly) {
  FloatTensor x = FT({1, 1, 1, 3}, {0.f, 1.f, -1.f}), w = FT({1, 1, 1, 1}, {1.f});
  EXPECT_THAT(EvalF1(OpKind::kConv2D, WithActivation(Activation::kTanh), {&x, &w}).data,
              Near({0.f, 0.76159416f, -0.76159416f}));
  EXPECT_THAT(EvalF1(OpKind::kConv2D, WithActivation(Activation::kSigmoid), {&x, &w}).data,
              Near({0.5f, 0.73105858f, 0.26894142f}));
  IntTensor xi = IT({1, 1, 1, 3}, {0, 1, -1}), wi = IT({1, 1, 1, 1}, {1});
  for (Activation a : {Activation::kTanh, Activation::kSigmoid}) {
    auto r = EvalOpInt(OpKind::kConv2D, WithActivation(a), {&xi, &wi});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  }
}

// The int32 interpreter convolves by patches (a matrix product over
// zero-padded windows), the float one tap by tap: on small integers, where
// float sums are exact, both must give the same numbers for every stride,
// padding, grouping, bias and activation.
TEST(Conv2D, PatchesAndTapsAgreeOnSmallIntegers) {
  uint32_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return static_cast<int32_t>((seed >> 16) % 7) - 3;
  };
  int cases = 0;
  for (int stride : {1, 2}) {
    for (Padding padding : {Padding::kSame, Padding::kValid}) {
      for (int groups : {1, 2}) {
        for (int k : {1, 3}) {
          for (bool bias : {false, true}) {
            const int64_t c = 4, cout = 4, cg = c / groups;
            IntTensor x = IT({2, c, 5, 6}, IV(2 * c * 5 * 6)), w = IT({cout, cg, k, k}, IV(cout * cg * k * k));
            IntTensor b = IT({cout}, IV(cout));
            for (auto* t : {&x, &w, &b}) {
              for (int32_t& v : t->data) v = next();
            }
            const OpParams params = ConvParams(stride, padding, bias ? Activation::kRelu : Activation::kNone);
            std::vector<const IntTensor*> in = {&x, &w};
            FloatTensor xf = ToF(x), wf = ToF(w), bf = ToF(b);
            std::vector<const FloatTensor*> fin = {&xf, &wf};
            if (bias) {
              in.push_back(&b);
              fin.push_back(&bf);
            }
            const IntTensor oi = EvalI1(OpKind::kConv2D, params, in);
            const FloatTensor of = EvalF1(OpKind::kConv2D, params, fin);
            ASSERT_EQ(oi.type.dims, of.type.dims);
            ASSERT_GT(oi.data.size(), 0u);
            EXPECT_THAT(of.data, Near(ToFV(oi.data)))
                << "stride " << stride << ", groups " << groups << ", kernel " << k << ", bias " << bias;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 32);
}

// ---------------------------------------------------------------- enlarge

TEST(Enlarge, OneByOneToThreeByThree) {
  ExpectBoth(OpKind::kEnlarge, Kernel(3, 3), {IT({2, 1, 1, 1}, {5, 7})}, {2, 1, 3, 3},
             {0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0});
}

TEST(Enlarge, OneByThreeAndThreeByOneCentred) {
  ExpectBoth(OpKind::kEnlarge, Kernel(3, 3), {IT({1, 1, 1, 3}, {1, 2, 3})}, {1, 1, 3, 3},
             {0, 0, 0, 1, 2, 3, 0, 0, 0});
  ExpectBoth(OpKind::kEnlarge, Kernel(3, 3), {IT({1, 1, 3, 1}, {1, 2, 3})}, {1, 1, 3, 3},
             {0, 1, 0, 0, 2, 0, 0, 3, 0});
}

TEST(Enlarge, SameConvUnchanged) {
  // conv SAME with 1x3 [1,2,3]: out[y][x] = x[y][x-1] + 2 x[y][x] + 3 x[y][x+1].
  const IV expected = {8, 14, 8, 23, 32, 17, 38, 50, 26};
  IntTensor x = IT({1, 1, 3, 3}, kNine);
  IntTensor w = IT({1, 1, 1, 3}, {1, 2, 3});
  ExpectBoth(OpKind::kConv2D, {}, {x, w}, {1, 1, 3, 3}, expected);
  IntTensor big = EvalI1(OpKind::kEnlarge, Kernel(3, 3), {&w});
  ExpectBoth(OpKind::kConv2D, {}, {x, big}, {1, 1, 3, 3}, expected);
  // 1x1 [5] and its enlargement both give 5x.
  IntTensor w1 = IT({1, 1, 1, 1}, {5});
  IntTensor big1 = EvalI1(OpKind::kEnlarge, Kernel(3, 3), {&w1});
  ExpectBoth(OpKind::kConv2D, {}, {x, w1}, {1, 1, 3, 3}, {5, 10, 15, 20, 25, 30, 35, 40, 45});
  ExpectBoth(OpKind::kConv2D, {}, {x, big1}, {1, 1, 3, 3}, {5, 10, 15, 20, 25, 30, 35, 40, 45});
}

// ---------------------------------------------------------------- pooling
// ---------------------------------------------------------------- agreement

// Two orders of one sum that cancels: equal as reals, apart in float by the
// rounding of the large terms. Measured against the values alone they
// disagree; against the partial sums (the sum of absolute values) they agree,
// and a wrong value still does not.
TEST(FloatsAgree, MeasuresRoundingAgainstThePartialSums) {
  const float big = 3000.0f, small = 0.0123f;
  const float left = (big + small) - big;   // the small term rounded at big's scale
  const float right = small + (big - big);  // exact
  ASSERT_NE(left, right);
  EXPECT_FALSE(FloatsAgree(left, right, 1e-6));
  const double scale = 2 * big + small;  // evaluated on absolute values
  EXPECT_TRUE(FloatsAgree(left, right, 1e-6, scale));
  EXPECT_FALSE(FloatsAgree(left, right + 0.5, 1e-6, scale));
  EXPECT_TRUE(FloatsAgree(-2.0, -2.0, 0.0));
}

TEST(AbsoluteFeeds, EveryValueIsMadeNonNegative) {
  std::map<std::string, FloatTensor> feeds{{"x", FT({3}, {-1.5f, 0.f, 2.f})}, {"w", FT({1}, {-0.25f})}};
  auto abs = AbsoluteFeeds(feeds);
  EXPECT_THAT(abs["x"].data, Near({1.5f, 0.f, 2.f}));
  EXPECT_THAT(abs["w"].data, Near({0.25f}));
  EXPECT_EQ(abs["x"].type.dims, feeds["x"].type.dims);
}

}  // namespace
}  // namespace taso
