// Reference interpreters, operator by operator, in both value domains
// (int32 with wrap-around and float32), against small hand-computed values.
// Expected numbers are written out literally; nothing here re-implements an
// operator.
#include "core/interpreter.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

using Dims = std::vector<int64_t>;
using IV = std::vector<int32_t>;
using FV = std::vector<float>;

constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();

TensorType F32(Dims dims) { return TensorType::RowMajor(DType::kFloat32, std::move(dims)); }

IntTensor IT(Dims dims, IV data) { return IntTensor{F32(std::move(dims)), std::move(data)}; }
FloatTensor FT(Dims dims, FV data) { return FloatTensor{F32(std::move(dims)), std::move(data)}; }

// Same integer literals as float values (all small, so exact in float).
FloatTensor ToF(const IntTensor& t) {
  FloatTensor f;
  f.type = t.type;
  for (int32_t v : t.data) f.data.push_back(static_cast<float>(v));
  return f;
}
FV ToFV(const IV& v) {
  FV f;
  for (int32_t x : v) f.push_back(static_cast<float>(x));
  return f;
}

auto Near(const FV& expected) { return Pointwise(FloatNear(1e-5f), expected); }

std::vector<IntTensor> EvalI(OpKind kind, const OpParams& p, std::vector<const IntTensor*> in,
                             IntOptions options = {}) {
  auto r = EvalOpInt(kind, p, in, options);
  EXPECT_TRUE(r.ok()) << OpKindName(kind) << " (int): " << r.status();
  return r.ok() ? *r : std::vector<IntTensor>{};
}
std::vector<FloatTensor> EvalF(OpKind kind, const OpParams& p, std::vector<const FloatTensor*> in) {
  auto r = EvalOpFloat(kind, p, in);
  EXPECT_TRUE(r.ok()) << OpKindName(kind) << " (float): " << r.status();
  return r.ok() ? *r : std::vector<FloatTensor>{};
}
IntTensor EvalI1(OpKind kind, const OpParams& p, std::vector<const IntTensor*> in, IntOptions options = {}) {
  auto v = EvalI(kind, p, std::move(in), options);
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? IntTensor{} : v[0];
}
FloatTensor EvalF1(OpKind kind, const OpParams& p, std::vector<const FloatTensor*> in) {
  auto v = EvalF(kind, p, std::move(in));
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? FloatTensor{} : v[0];
}

// Runs a one-output operator in both interpreters on the same integer
// literals and checks both against the same hand-computed result (for the
// operators whose int and float semantics agree on small integers).
void ExpectBoth(OpKind kind, const OpParams& p, const std::vector<IntTensor>& in, const Dims& out_dims,
                const IV& expected) {
  std::vector<const IntTensor*> ip;
  std::vector<FloatTensor> fin;
  for (const IntTensor& t : in) {
    ip.push_back(&t);
    fin.push_back(ToF(t));
  }
  std::vector<const FloatTensor*> fp;
  for (const FloatTensor& t : fin) fp.push_back(&t);
  IntTensor oi = EvalI1(kind, p, ip);
  EXPECT_EQ(oi.type.dims, out_dims) << "int";
  EXPECT_EQ(oi.data, expected) << "int";
  FloatTensor of = EvalF1(kind, p, fp);
  EXPECT_EQ(of.type.dims, out_dims) << "float";
  EXPECT_THAT(of.data, Near(ToFV(expected))) << "float";
}

OpParams Perm(std::vector<int> perm, bool shuffle = true) {
  OpParams p;
  p.perm = std::move(perm);
  p.shuffle = shuffle;
  return p;
}
OpParams Act(Activation a) {
  OpParams p;
  p.activation = a;
  return p;
}
OpParams ConvP(int stride, Padding pad, Activation a = Activation::kNone) {
  OpParams p;
  p.stride_h = p.stride_w = stride;
  p.padding = pad;
  p.activation = a;
  return p;
}
OpParams Kernel(int kh, int kw) {
  OpParams p;
  p.kernel_h = kh;
  p.kernel_w = kw;
  return p;
}
OpParams Pool3x3Same(bool count_include_pad = true) {
  OpParams p = Kernel(3, 3);
  p.stride_h = p.stride_w = 1;
  p.padding = Padding::kSame;
  p.count_include_pad = count_include_pad;
  return p;
}
OpParams Axis(int axis) {
  OpParams p;
  p.axis = axis;
  return p;
}
OpParams Shape(Dims shape) {
  OpParams p;
  p.shape = std::move(shape);
  return p;
}

// 1..9 as a 3x3 image.
const IV kNine = {1, 2, 3, 4, 5, 6, 7, 8, 9};
// 3x3 SAME box sums of kNine (window clipped at the borders).
const IV kBoxSums = {12, 21, 16, 27, 45, 33, 24, 39, 28};

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
  EXPECT_EQ(EvalI1(OpKind::kMatMul, Act(Activation::kRelu), {&x, &w}).data, (IV{0, 1, 0, 1}));
  IntOptions poly;
  poly.relu_as_polynomial = true;
  // -1 -> 1, 1 -> 3
  EXPECT_EQ(EvalI1(OpKind::kMatMul, Act(Activation::kRelu), {&x, &w}, poly).data, (IV{1, 3, 1, 3}));
  FloatTensor xf = ToF(x), wf = ToF(w);
  EXPECT_THAT(EvalF1(OpKind::kMatMul, Act(Activation::kRelu), {&xf, &wf}).data, Near({0, 1, 0, 1}));
}

TEST(MatMul, TanhAndSigmoidActivationsFloatOnly) {
  IntTensor x = IT({2, 2}, {1, 2, 3, 4}), w = IT({2, 2}, {1, -1, -1, 1});
  FloatTensor xf = ToF(x), wf = ToF(w);
  EXPECT_THAT(EvalF1(OpKind::kMatMul, Act(Activation::kTanh), {&xf, &wf}).data,
              Near({-0.76159416f, 0.76159416f, -0.76159416f, 0.76159416f}));
  EXPECT_THAT(EvalF1(OpKind::kMatMul, Act(Activation::kSigmoid), {&xf, &wf}).data,
              Near({0.26894142f, 0.73105858f, 0.26894142f, 0.73105858f}));
  for (Activation a : {Activation::kTanh, Activation::kSigmoid}) {
    auto r = EvalOpInt(OpKind::kMatMul, Act(a), {&x, &w});
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
  ExpectBoth(OpKind::kConv2D, ConvP(1, Padding::kSame), {x, w}, {1, 1, 3, 3}, {-4, -4, 3, -2, 1, 14, 15, 22, 26});
}

TEST(Conv2D, ThreeByThreeSameStride2On5x5) {
  // x[i][j] = 5i+j+1; out 3x3, total pad 2, pad_before 1:
  // out[oy][ox] = x[2oy-1][2ox-1] + 10 x[2oy+1][2ox+1] (w: 1 top-left, 10 bottom-right).
  IntTensor x = IT({1, 1, 5, 5}, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                  14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25});
  IntTensor w = IT({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 10});
  ExpectBoth(OpKind::kConv2D, ConvP(2, Padding::kSame), {x, w}, {1, 1, 3, 3}, {70, 90, 0, 170, 197, 9, 0, 17, 19});
}

TEST(Conv2D, SameStride2OddTotalPadPutsSmallerHalfBefore) {
  // 4x4, k=3, s=2: out 2x2, total pad (2-1)*2+3-4 = 1, pad_before 0 (the extra row/column goes after).
  // x[i][j] = 4i+j+1; out[oy][ox] = x[2oy][2ox] + 10 x[2oy+2][2ox+2] (zero past the end).
  IntTensor x = IT({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  IntTensor w = IT({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 10});
  ExpectBoth(OpKind::kConv2D, ConvP(2, Padding::kSame), {x, w}, {1, 1, 2, 2}, {111, 3, 9, 11});
  // Max pool with the same geometry: windows rows/cols {0,1,2} and {2,3}.
  OpParams p = Kernel(3, 3);
  p.stride_h = p.stride_w = 2;
  ExpectBoth(OpKind::kPoolMax, p, {x}, {1, 1, 2, 2}, {11, 12, 15, 16});
}

TEST(Conv2D, Valid) {
  // 2x2 kernel [[1,2],[3,4]] on 1..9, VALID stride 1 -> 2x2.
  IntTensor x = IT({1, 1, 3, 3}, kNine);
  ExpectBoth(OpKind::kConv2D, ConvP(1, Padding::kValid), {x, IT({1, 1, 2, 2}, {1, 2, 3, 4})}, {1, 1, 2, 2},
             {37, 47, 67, 77});
  // 3x3 VALID stride 2 on 5x5 -> 2x2: out = x[2oy][2ox] + 10 x[2oy+2][2ox+2].
  IntTensor x5 = IT({1, 1, 5, 5}, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                   14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25});
  ExpectBoth(OpKind::kConv2D, ConvP(2, Padding::kValid), {x5, IT({1, 1, 3, 3}, {1, 0, 0, 0, 0, 0, 0, 0, 10})},
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
  const OpParams relu = ConvP(1, Padding::kSame, Activation::kRelu);
  // pre-activation: [6,8,10,12, -3,-2,-1,0, 15,18,21,24]
  ExpectBoth(OpKind::kConv2D, relu, {x, w}, {1, 3, 2, 2}, {6, 8, 10, 12, 0, 0, 0, 0, 15, 18, 21, 24});
  IntOptions poly;
  poly.relu_as_polynomial = true;
  EXPECT_EQ(EvalI1(OpKind::kConv2D, relu, {&x, &w}, poly).data,
            (IV{43, 73, 111, 157, 7, 3, 1, 1, 241, 343, 463, 601}));
}

TEST(Conv2D, TanhAndSigmoidActivationsFloatOnly) {
  FloatTensor x = FT({1, 1, 1, 3}, {0.f, 1.f, -1.f}), w = FT({1, 1, 1, 1}, {1.f});
  EXPECT_THAT(EvalF1(OpKind::kConv2D, Act(Activation::kTanh), {&x, &w}).data,
              Near({0.f, 0.76159416f, -0.76159416f}));
  EXPECT_THAT(EvalF1(OpKind::kConv2D, Act(Activation::kSigmoid), {&x, &w}).data,
              Near({0.5f, 0.73105858f, 0.26894142f}));
  IntTensor xi = IT({1, 1, 1, 3}, {0, 1, -1}), wi = IT({1, 1, 1, 1}, {1});
  for (Activation a : {Activation::kTanh, Activation::kSigmoid}) {
    auto r = EvalOpInt(OpKind::kConv2D, Act(a), {&xi, &wi});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  }
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

TEST(PoolAvg, IntIsWindowSum) {
  IntTensor x = IT({1, 1, 3, 3}, kNine);
  IntTensor o = EvalI1(OpKind::kPoolAvg, Pool3x3Same(), {&x});
  EXPECT_EQ(o.type.dims, (Dims{1, 1, 3, 3}));
  EXPECT_EQ(o.data, kBoxSums);
  // count_include_pad makes no difference to a sum.
  EXPECT_EQ(EvalI1(OpKind::kPoolAvg, Pool3x3Same(false), {&x}).data, kBoxSums);
}

TEST(PoolAvg, FloatCountIncludePadDividesByNine) {
  FloatTensor x = ToF(IT({1, 1, 3, 3}, kNine));
  EXPECT_THAT(EvalF1(OpKind::kPoolAvg, Pool3x3Same(true), {&x}).data,
              Near({12.f / 9, 21.f / 9, 16.f / 9, 3.f, 5.f, 33.f / 9, 24.f / 9, 39.f / 9, 28.f / 9}));
}

TEST(PoolAvg, FloatExcludePadDividesByValidCount) {
  // Corners see 4 values, edges 6, the centre 9.
  FloatTensor x = ToF(IT({1, 1, 3, 3}, kNine));
  EXPECT_THAT(EvalF1(OpKind::kPoolAvg, Pool3x3Same(false), {&x}).data,
              Near({3.f, 3.5f, 4.f, 4.5f, 5.f, 5.5f, 6.f, 6.5f, 7.f}));
}

TEST(PoolMax, SameThreeByThree) {
  ExpectBoth(OpKind::kPoolMax, Pool3x3Same(), {IT({1, 1, 3, 3}, kNine)}, {1, 1, 3, 3}, {5, 6, 6, 8, 9, 9, 8, 9, 9});
  // All negative: padding takes no part (TASO's generator started from 0 and
  // would give all zeros here).
  ExpectBoth(OpKind::kPoolMax, Pool3x3Same(), {IT({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9})},
             {1, 1, 3, 3}, {-1, -1, -2, -1, -1, -2, -4, -4, -5});
}

TEST(PoolMax, PerChannel) {
  // Two planes pooled independently.
  ExpectBoth(OpKind::kPoolMax, Pool3x3Same(),
             {IT({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1})}, {1, 2, 3, 3},
             {5, 6, 6, 8, 9, 9, 8, 9, 9, 9, 9, 8, 9, 9, 8, 6, 6, 5});
}

// ---------------------------------------------------------------- constants

TEST(ConstPool, IntOnesFloatInverseArea) {
  IntTensor oi = EvalI1(OpKind::kConstPool, Shape({2, 1, 3, 3}), {});
  EXPECT_EQ(oi.type.dims, (Dims{2, 1, 3, 3}));
  EXPECT_EQ(oi.data, IV(18, 1));
  FloatTensor of = EvalF1(OpKind::kConstPool, Shape({2, 1, 3, 3}), {});
  EXPECT_EQ(of.type.dims, (Dims{2, 1, 3, 3}));
  EXPECT_THAT(of.data, Near(FV(18, 1.f / 9)));
  EXPECT_THAT(EvalF1(OpKind::kConstPool, Shape({1, 1, 1, 3}), {}).data, Near({1.f / 3, 1.f / 3, 1.f / 3}));
}

TEST(ConstPool, DepthwiseConvEqualsAvgPool) {
  // c0 = 1..9, c1 = 10..90.
  IntTensor x = IT({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  const IV sums = {12, 21, 16, 27, 45, 33, 24, 39, 28, 120, 210, 160, 270, 450, 330, 240, 390, 280};
  IntTensor cp = EvalI1(OpKind::kConstPool, Shape({2, 1, 3, 3}), {});
  EXPECT_EQ(EvalI1(OpKind::kConv2D, {}, {&x, &cp}).data, sums);
  EXPECT_EQ(EvalI1(OpKind::kPoolAvg, Pool3x3Same(), {&x}).data, sums);

  FloatTensor xf = ToF(x);
  FloatTensor cpf = EvalF1(OpKind::kConstPool, Shape({2, 1, 3, 3}), {});
  const FV means = {12.f / 9,  21.f / 9,  16.f / 9,  3.f,       5.f,       33.f / 9,  24.f / 9,  39.f / 9,  28.f / 9,
                    120.f / 9, 210.f / 9, 160.f / 9, 270.f / 9, 450.f / 9, 330.f / 9, 240.f / 9, 390.f / 9, 280.f / 9};
  EXPECT_THAT(EvalF1(OpKind::kConv2D, {}, {&xf, &cpf}).data, Near(means));
  EXPECT_THAT(EvalF1(OpKind::kPoolAvg, Pool3x3Same(true), {&xf}).data, Near(means));
}

TEST(ConstIConv, LayoutAndIdentity) {
  // (2,2,3,3): ones at (0,0,1,1) = index 4 and (1,1,1,1) = index 31.
  IV expected(36, 0);
  expected[4] = 1;
  expected[31] = 1;
  EXPECT_EQ(EvalI1(OpKind::kConstIConv, Shape({2, 2, 3, 3}), {}).data, expected);
  EXPECT_THAT(EvalF1(OpKind::kConstIConv, Shape({2, 2, 3, 3}), {}).data, Near(ToFV(expected)));

  IntTensor x = IT({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9});
  IntTensor ic = EvalI1(OpKind::kConstIConv, Shape({2, 2, 3, 3}), {});
  ExpectBoth(OpKind::kConv2D, {}, {x, ic}, {1, 2, 3, 3}, x.data);

  // Depthwise form (2,1,3,3): centre of each plane.
  IV dw(18, 0);
  dw[4] = 1;
  dw[13] = 1;
  IntTensor icd = EvalI1(OpKind::kConstIConv, Shape({2, 1, 3, 3}), {});
  EXPECT_EQ(icd.data, dw);
  ExpectBoth(OpKind::kConv2D, {}, {x, icd}, {1, 2, 3, 3}, x.data);
}

TEST(ConstIMatMul, IdentityMatrix) {
  EXPECT_EQ(EvalI1(OpKind::kConstIMatMul, Shape({3, 3}), {}).data, (IV{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_THAT(EvalF1(OpKind::kConstIMatMul, Shape({3, 3}), {}).data, Near({1, 0, 0, 0, 1, 0, 0, 0, 1}));
  IntTensor id = EvalI1(OpKind::kConstIMatMul, Shape({3, 3}), {});
  ExpectBoth(OpKind::kMatMul, {}, {IT({2, 3}, {1, -2, 3, 4, 5, -6}), id}, {2, 3}, {1, -2, 3, 4, 5, -6});
}

TEST(ConstOnes, AllOnes) {
  IntTensor oi = EvalI1(OpKind::kConstOnes, Shape({2, 3}), {});
  EXPECT_EQ(oi.type.dims, (Dims{2, 3}));
  EXPECT_EQ(oi.data, IV(6, 1));
  EXPECT_THAT(EvalF1(OpKind::kConstOnes, Shape({2, 3}), {}).data, Near(FV(6, 1.f)));
}

// ---------------------------------------------------------------- concat / split

TEST(Concat, Axis0) {
  IntTensor a = IT({1, 2}, {1, 2}), b = IT({2, 2}, {3, 4, 5, 6});
  IntTensor o = EvalI1(OpKind::kConcat, Axis(0), {&a, &b});
  EXPECT_EQ(o.type.dims, (Dims{3, 2}));
  EXPECT_EQ(o.data, (IV{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(SplitTreeToString(o.type.split[0]), "(1:.,.)");
  EXPECT_EQ(o.type.split[1], nullptr);
  FloatTensor af = ToF(a), bf = ToF(b);
  FloatTensor of = EvalF1(OpKind::kConcat, Axis(0), {&af, &bf});
  EXPECT_EQ(of.type, o.type);
  EXPECT_THAT(of.data, Near({1, 2, 3, 4, 5, 6}));
}

TEST(Concat, Axis1ThreeWay) {
  // [[1],[2]] ++ [[3,4],[5,6]] ++ [[7],[8]] = [[1,3,4,7],[2,5,6,8]]
  IntTensor a = IT({2, 1}, {1, 2}), b = IT({2, 2}, {3, 4, 5, 6}), c = IT({2, 1}, {7, 8});
  ExpectBoth(OpKind::kConcat, Axis(1), {a, b, c}, {2, 4}, {1, 3, 4, 7, 2, 5, 6, 8});
  IntTensor o = EvalI1(OpKind::kConcat, Axis(1), {&a, &b, &c});
  EXPECT_EQ(SplitTreeToString(o.type.split[1]), "(3:(1:.,.),.)");
  EXPECT_EQ(o.type.split[0], nullptr);
  EXPECT_TRUE(o.type.is_row_major());
}

TEST(Split, UndoesConcatExactly) {
  IntTensor a = IT({2, 1}, {1, 2}), b = IT({2, 2}, {3, 4, 5, 6});
  IntTensor ab = EvalI1(OpKind::kConcat, Axis(1), {&a, &b});
  EXPECT_EQ(ab.data, (IV{1, 3, 4, 2, 5, 6}));
  std::vector<IntTensor> parts = EvalI(OpKind::kSplit, Axis(1), {&ab});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].type, a.type) << parts[0].type.ToString();
  EXPECT_EQ(parts[1].type, b.type) << parts[1].type.ToString();
  EXPECT_EQ(parts[0].data, a.data);
  EXPECT_EQ(parts[1].data, b.data);

  FloatTensor af = ToF(a), bf = ToF(b);
  FloatTensor abf = EvalF1(OpKind::kConcat, Axis(1), {&af, &bf});
  std::vector<FloatTensor> fparts = EvalF(OpKind::kSplit, Axis(1), {&abf});
  ASSERT_EQ(fparts.size(), 2u);
  EXPECT_EQ(fparts[0].type, a.type);
  EXPECT_EQ(fparts[1].type, b.type);
  EXPECT_THAT(fparts[0].data, Near({1, 2}));
  EXPECT_THAT(fparts[1].data, Near({3, 4, 5, 6}));

  // Axis 0 as well.
  IntTensor c = IT({1, 3}, {1, 2, 3}), d = IT({2, 3}, {4, 5, 6, 7, 8, 9});
  IntTensor cd = EvalI1(OpKind::kConcat, Axis(0), {&c, &d});
  std::vector<IntTensor> rows = EvalI(OpKind::kSplit, Axis(0), {&cd});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].type, c.type);
  EXPECT_EQ(rows[1].type, d.type);
  EXPECT_EQ(rows[0].data, c.data);
  EXPECT_EQ(rows[1].data, d.data);
}

TEST(Split, PeelsThreeWayConcat) {
  IntTensor a = IT({2, 1}, {1, 2}), b = IT({2, 2}, {3, 4, 5, 6}), c = IT({2, 1}, {7, 8});
  IntTensor abc = EvalI1(OpKind::kConcat, Axis(1), {&a, &b, &c});
  std::vector<IntTensor> p1 = EvalI(OpKind::kSplit, Axis(1), {&abc});
  ASSERT_EQ(p1.size(), 2u);
  // Left: concat(a,b), with its split tree; right: c.
  EXPECT_EQ(p1[0].type.dims, (Dims{2, 3}));
  EXPECT_EQ(SplitTreeToString(p1[0].type.split[1]), "(1:.,.)");
  EXPECT_EQ(p1[0].data, (IV{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(p1[1].type, c.type);
  EXPECT_EQ(p1[1].data, c.data);
  std::vector<IntTensor> p2 = EvalI(OpKind::kSplit, Axis(1), {&p1[0]});
  ASSERT_EQ(p2.size(), 2u);
  EXPECT_EQ(p2[0].type, a.type);
  EXPECT_EQ(p2[1].type, b.type);
  EXPECT_EQ(p2[0].data, a.data);
  EXPECT_EQ(p2[1].data, b.data);
}

TEST(Split, ExplicitSizes) {
  IntTensor x = IT({2, 3}, {1, 2, 3, 4, 5, 6});
  OpParams p = Axis(1);
  p.sizes = {1, 2};
  std::vector<IntTensor> parts = EvalI(OpKind::kSplit, p, {&x});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].type, F32({2, 1}));
  EXPECT_EQ(parts[1].type, F32({2, 2}));
  EXPECT_EQ(parts[0].data, (IV{1, 4}));
  EXPECT_EQ(parts[1].data, (IV{2, 3, 5, 6}));

  p.sizes = {1, 1, 1};
  FloatTensor xf = ToF(x);
  std::vector<FloatTensor> cols = EvalF(OpKind::kSplit, p, {&xf});
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_THAT(cols[0].data, Near({1, 4}));
  EXPECT_THAT(cols[1].data, Near({2, 5}));
  EXPECT_THAT(cols[2].data, Near({3, 6}));

  OpParams rows = Axis(0);
  rows.sizes = {1, 1};
  std::vector<IntTensor> r = EvalI(OpKind::kSplit, rows, {&x});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].data, (IV{1, 2, 3}));
  EXPECT_EQ(r[1].data, (IV{4, 5, 6}));
}

TEST(Split, WithoutConcatPointIsAnError) {
  IntTensor x = IT({2, 4}, IV(8, 0));
  auto r = EvalOpInt(OpKind::kSplit, Axis(1), {&x});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- reshape

TEST(Reshape, KeepsRowMajorOrder) {
  ExpectBoth(OpKind::kReshape, Shape({3, 2}), {IT({2, 3}, {1, 2, 3, 4, 5, 6})}, {3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectBoth(OpKind::kReshape, Shape({6}), {IT({2, 3}, {1, 2, 3, 4, 5, 6})}, {6}, {1, 2, 3, 4, 5, 6});
  // Reshaping a strided (transposed, not shuffled) view reshapes its logical values.
  IntTensor x = IT({2, 3}, {1, 2, 3, 4, 5, 6});
  IntTensor t = EvalI1(OpKind::kTranspose, Perm({1, 0}, false), {&x});
  IntTensor r = EvalI1(OpKind::kReshape, Shape({6}), {&t});
  EXPECT_EQ(r.data, (IV{1, 4, 2, 5, 3, 6}));
  EXPECT_TRUE(r.type.is_row_major());
}

// ---------------------------------------------------------------- merge_gconv

TEST(MergeGConv, BlockDiagonalLayout) {
  // Depthwise weight (4,1,1,1) = [1,2,3,4], groups=4 merged in pairs:
  // new (4,2,1,1): oc0 = [1,0], oc1 = [0,2], oc2 = [3,0], oc3 = [0,4].
  OpParams p;
  p.groups = 4;
  p.count = 2;
  ExpectBoth(OpKind::kMergeGConv, p, {IT({4, 1, 1, 1}, {1, 2, 3, 4})}, {4, 2, 1, 1}, {1, 0, 0, 2, 3, 0, 0, 4});
  // Two output channels per group (groups=2, count=2): oc0,oc1 in block 0, oc2,oc3 in block 1.
  OpParams q;
  q.groups = 2;
  q.count = 2;
  ExpectBoth(OpKind::kMergeGConv, q, {IT({4, 1, 1, 1}, {1, 2, 3, 4})}, {4, 2, 1, 1}, {1, 0, 2, 0, 0, 3, 0, 4});
}

TEST(MergeGConv, MergedConvEqualsGroupedConv) {
  // x channels c0=[1,2], c1=[3,4], c2=[5,6], c3=[7,8]; depthwise [1,2,3,4] scales them.
  const IV expected = {1, 2, 6, 8, 15, 18, 28, 32};
  IntTensor x = IT({1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  IntTensor w = IT({4, 1, 1, 1}, {1, 2, 3, 4});
  ExpectBoth(OpKind::kConv2D, {}, {x, w}, {1, 4, 1, 2}, expected);
  OpParams p;
  p.groups = 4;
  p.count = 2;
  IntTensor merged = EvalI1(OpKind::kMergeGConv, p, {&w});
  ExpectBoth(OpKind::kConv2D, {}, {x, merged}, {1, 4, 1, 2}, expected);
  // With 3x3 kernels: a depthwise centre-k kernel per channel, merged in pairs.
  IntTensor x3 = IT({1, 4, 1, 1}, {1, 2, 3, 4});
  IntTensor w3 = IT({4, 1, 3, 3}, {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0,
                                   0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0});
  ExpectBoth(OpKind::kConv2D, {}, {x3, w3}, {1, 4, 1, 1}, {1, 4, 9, 16});
  IntTensor m3 = EvalI1(OpKind::kMergeGConv, p, {&w3});
  EXPECT_EQ(m3.type.dims, (Dims{4, 2, 3, 3}));
  ExpectBoth(OpKind::kConv2D, {}, {x3, m3}, {1, 4, 1, 1}, {1, 4, 9, 16});
}

// ---------------------------------------------------------------- batchnorm

TEST(BatchNorm, FloatAndIntUnimplemented) {
  // y = scale (x - mean) / sqrt(var + eps) + bias, per channel; eps = 0 here.
  // c0: 3 (x-1)/2 + 1 on [1,3] -> [1,4]; c1: 0.5 (x-2)/0.5 - 1 on [0,4] -> [-3,1].
  OpParams p;
  p.epsilon = 0.f;
  FloatTensor x = FT({1, 2, 1, 2}, {1.f, 3.f, 0.f, 4.f});
  FloatTensor scale = FT({2}, {3.f, 0.5f}), bias = FT({2}, {1.f, -1.f}), mean = FT({2}, {1.f, 2.f}),
              var = FT({2}, {4.f, 0.25f});
  FloatTensor o = EvalF1(OpKind::kBatchNorm, p, {&x, &scale, &bias, &mean, &var});
  EXPECT_EQ(o.type.dims, (Dims{1, 2, 1, 2}));
  EXPECT_THAT(o.data, Near({1.f, 4.f, -3.f, 1.f}));
  // Default epsilon 1e-5 with var = 1 - 1e-5: sqrt(1) = 1, so y = x - mean + bias.
  FloatTensor var1 = FT({2}, {1.f - 1e-5f, 1.f - 1e-5f}), one = FT({2}, {1.f, 1.f});
  OpParams d;
  EXPECT_THAT(EvalF1(OpKind::kBatchNorm, d, {&x, &one, &bias, &mean, &var1}).data, Near({1.f, 3.f, -3.f, 1.f}));

  IntTensor xi = IT({1, 2, 1, 2}, {1, 3, 0, 4});
  IntTensor s = IT({2}, {1, 1}), b = IT({2}, {0, 0}), m = IT({2}, {0, 0}), v = IT({2}, {1, 1});
  auto r = EvalOpInt(OpKind::kBatchNorm, p, {&xi, &s, &b, &m, &v});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// ---------------------------------------------------------------- opaque / sources

TEST(Opaque, Unimplemented) {
  OpParams p;
  p.opaque.op_type = "Gather";
  p.opaque.output_types = {F32({2})};
  IntTensor xi = IT({2}, {1, 2});
  auto ri = EvalOpInt(OpKind::kOpaque, p, {&xi});
  ASSERT_FALSE(ri.ok());
  EXPECT_EQ(ri.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(ri.status().message(), HasSubstr("Gather"));
  FloatTensor xf = FT({2}, {1.f, 2.f});
  auto rf = EvalOpFloat(OpKind::kOpaque, p, {&xf});
  ASSERT_FALSE(rf.ok());
  EXPECT_EQ(rf.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(Sources, InputAndWeightAreNotEvaluated) {
  for (OpKind k : {OpKind::kInput, OpKind::kWeight}) {
    auto ri = EvalOpInt(k, OpParams{}, {});
    EXPECT_FALSE(ri.ok()) << OpKindName(k);
    EXPECT_EQ(ri.status().code(), absl::StatusCode::kInvalidArgument);
    auto rf = EvalOpFloat(k, OpParams{}, {});
    EXPECT_FALSE(rf.ok()) << OpKindName(k);
    EXPECT_EQ(rf.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(EvalOp, WrongDataSizeIsAnError) {
  IntTensor a = IT({2, 2}, {1, 2, 3}), b = IT({2, 2}, {1, 2, 3, 4});
  auto r = EvalOpInt(OpKind::kEwAdd, {}, {&a, &b});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- whole graphs

// x (2,2), w (2,2); outputs: "y" = relu(matmul(x, w)), then "mm" = matmul(x, w).
Graph ReluMatMulGraph(std::shared_ptr<const std::string> w_data = nullptr) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({2, 2}));
  TensorRef w = g.AddWeight("w", F32({2, 2}), std::move(w_data));
  auto mm = g.AddOp1(OpKind::kMatMul, OpParams{}, {x, w});
  EXPECT_TRUE(mm.ok()) << mm.status();
  auto y = g.AddOp1(OpKind::kRelu, OpParams{}, {*mm});
  EXPECT_TRUE(y.ok()) << y.status();
  g.AddOutput("y", *y);
  g.AddOutput("mm", *mm);
  return g;
}

TEST(EvaluateGraph, ReluMatMulOutputsInOrder) {
  Graph g = ReluMatMulGraph();
  // [[1,2],[3,4]] x [[1,-1],[-1,1]] = [[-1,1],[-1,1]]
  std::map<std::string, IntTensor> feeds = {{"x", IT({2, 2}, {1, 2, 3, 4})}, {"w", IT({2, 2}, {1, -1, -1, 1})}};
  auto ri = EvaluateInt(g, feeds);
  ASSERT_TRUE(ri.ok()) << ri.status();
  ASSERT_EQ(ri->size(), 2u);
  EXPECT_EQ((*ri)[0].data, (IV{0, 1, 0, 1}));
  EXPECT_EQ((*ri)[1].data, (IV{-1, 1, -1, 1}));
  EXPECT_EQ((*ri)[0].type.dims, (Dims{2, 2}));

  IntOptions poly;
  poly.relu_as_polynomial = true;
  auto rp = EvaluateInt(g, feeds, poly);
  ASSERT_TRUE(rp.ok()) << rp.status();
  EXPECT_EQ((*rp)[0].data, (IV{1, 3, 1, 3}));
  EXPECT_EQ((*rp)[1].data, (IV{-1, 1, -1, 1}));

  std::map<std::string, FloatTensor> ffeeds = {{"x", FT({2, 2}, {1.f, 2.f, 3.f, 4.f})},
                                               {"w", FT({2, 2}, {0.5f, -1.f, -1.f, 1.f})}};
  // [[1*0.5-2, -1+2],[3*0.5-4, -3+4]] = [[-1.5,1],[-2.5,1]]
  auto rf = EvaluateFloat(g, ffeeds);
  ASSERT_TRUE(rf.ok()) << rf.status();
  ASSERT_EQ(rf->size(), 2u);
  EXPECT_THAT((*rf)[0].data, Near({0.f, 1.f, 0.f, 1.f}));
  EXPECT_THAT((*rf)[1].data, Near({-1.5f, 1.f, -2.5f, 1.f}));
}

TEST(EvaluateGraph, MissingFeedIsAClearError) {
  Graph g = ReluMatMulGraph();
  std::map<std::string, IntTensor> feeds = {{"x", IT({2, 2}, {1, 2, 3, 4})}};
  auto ri = EvaluateInt(g, feeds);
  ASSERT_FALSE(ri.ok());
  EXPECT_EQ(ri.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ri.status().message(), HasSubstr("no value fed"));
  EXPECT_THAT(ri.status().message(), HasSubstr("w"));
  std::map<std::string, FloatTensor> ffeeds = {{"w", FT({2, 2}, {1, 0, 0, 1})}};
  auto rf = EvaluateFloat(g, ffeeds);
  ASSERT_FALSE(rf.ok());
  EXPECT_THAT(rf.status().message(), HasSubstr("no value fed"));
  EXPECT_THAT(rf.status().message(), HasSubstr("input x"));
  // A feed of the wrong shape is rejected too.
  feeds["w"] = IT({4}, {1, 0, 0, 1});
  auto rs = EvaluateInt(g, feeds);
  ASSERT_FALSE(rs.ok());
  EXPECT_THAT(rs.status().message(), HasSubstr("has shape [4]"));
}

TEST(EvaluateGraph, FloatWeightDataNeedsNoFeed) {
  const float w[4] = {1.f, -1.f, -1.f, 1.f};
  auto data = std::make_shared<const std::string>(reinterpret_cast<const char*>(w), sizeof(w));
  Graph g = ReluMatMulGraph(data);
  std::map<std::string, FloatTensor> ffeeds = {{"x", FT({2, 2}, {1.f, 2.f, 3.f, 4.f})}};
  auto rf = EvaluateFloat(g, ffeeds);
  ASSERT_TRUE(rf.ok()) << rf.status();
  EXPECT_THAT((*rf)[0].data, Near({0.f, 1.f, 0.f, 1.f}));
  EXPECT_THAT((*rf)[1].data, Near({-1.f, 1.f, -1.f, 1.f}));
  // The integer interpreter does not decode float data: the weight must be fed.
  std::map<std::string, IntTensor> feeds = {{"x", IT({2, 2}, {1, 2, 3, 4})}};
  EXPECT_FALSE(EvaluateInt(g, feeds).ok());
}

TEST(EvaluateGraph, ConcatSplitAndConstants) {
  // out0, out1 = split(concat_1(a, b)); out2 = conv(i, const_pool) (depthwise box sum).
  Graph g;
  TensorRef a = g.AddInput("a", F32({2, 1}));
  TensorRef b = g.AddInput("b", F32({2, 2}));
  auto cat = g.AddOp1(OpKind::kConcat, Axis(1), {a, b});
  ASSERT_TRUE(cat.ok()) << cat.status();
  auto parts = g.AddOp(OpKind::kSplit, Axis(1), {*cat});
  ASSERT_TRUE(parts.ok()) << parts.status();
  TensorRef img = g.AddInput("i", F32({1, 1, 3, 3}));
  auto cp = g.AddOp1(OpKind::kConstPool, Shape({1, 1, 3, 3}), {});
  ASSERT_TRUE(cp.ok()) << cp.status();
  auto conv = g.AddOp1(OpKind::kConv2D, OpParams{}, {img, *cp});
  ASSERT_TRUE(conv.ok()) << conv.status();
  g.AddOutput("b_again", (*parts)[1]);
  g.AddOutput("a_again", (*parts)[0]);
  g.AddOutput("pooled", *conv);
  std::map<std::string, IntTensor> feeds = {
      {"a", IT({2, 1}, {1, 2})}, {"b", IT({2, 2}, {3, 4, 5, 6})}, {"i", IT({1, 1, 3, 3}, kNine)}};
  auto r = EvaluateInt(g, feeds);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].data, (IV{3, 4, 5, 6}));
  EXPECT_EQ((*r)[1].data, (IV{1, 2}));
  EXPECT_EQ((*r)[2].data, kBoxSums);
}

}  // namespace
}  // namespace taso
