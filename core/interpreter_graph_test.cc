// Reference interpreters, continued: windows (pooling), constants, concat and
// split, reshape, merge_gconv, batchnorm, opaque operators and whole graphs.
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
  IntTensor oi = EvalI1(OpKind::kConstPool, ShapeParam({2, 1, 3, 3}), {});
  EXPECT_EQ(oi.type.dims, (Dims{2, 1, 3, 3}));
  EXPECT_EQ(oi.data, IV(18, 1));
  FloatTensor of = EvalF1(OpKind::kConstPool, ShapeParam({2, 1, 3, 3}), {});
  EXPECT_EQ(of.type.dims, (Dims{2, 1, 3, 3}));
  EXPECT_THAT(of.data, Near(FV(18, 1.f / 9)));
  EXPECT_THAT(EvalF1(OpKind::kConstPool, ShapeParam({1, 1, 1, 3}), {}).data, Near({1.f / 3, 1.f / 3, 1.f / 3}));
}

TEST(ConstPool, DepthwiseConvEqualsAvgPool) {
  // c0 = 1..9, c1 = 10..90.
  IntTensor x = IT({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  const IV sums = {12, 21, 16, 27, 45, 33, 24, 39, 28, 120, 210, 160, 270, 450, 330, 240, 390, 280};
  IntTensor cp = EvalI1(OpKind::kConstPool, ShapeParam({2, 1, 3, 3}), {});
  EXPECT_EQ(EvalI1(OpKind::kConv2D, {}, {&x, &cp}).data, sums);
  EXPECT_EQ(EvalI1(OpKind::kPoolAvg, Pool3x3Same(), {&x}).data, sums);

  FloatTensor xf = ToF(x);
  FloatTensor cpf = EvalF1(OpKind::kConstPool, ShapeParam({2, 1, 3, 3}), {});
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
  EXPECT_EQ(EvalI1(OpKind::kConstIConv, ShapeParam({2, 2, 3, 3}), {}).data, expected);
  EXPECT_THAT(EvalF1(OpKind::kConstIConv, ShapeParam({2, 2, 3, 3}), {}).data, Near(ToFV(expected)));

  IntTensor x = IT({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2, -3, -4, -5, -6, -7, -8, -9});
  IntTensor ic = EvalI1(OpKind::kConstIConv, ShapeParam({2, 2, 3, 3}), {});
  ExpectBoth(OpKind::kConv2D, {}, {x, ic}, {1, 2, 3, 3}, x.data);

  // Depthwise form (2,1,3,3): centre of each plane.
  IV dw(18, 0);
  dw[4] = 1;
  dw[13] = 1;
  IntTensor icd = EvalI1(OpKind::kConstIConv, ShapeParam({2, 1, 3, 3}), {});
  EXPECT_EQ(icd.data, dw);
  ExpectBoth(OpKind::kConv2D, {}, {x, icd}, {1, 2, 3, 3}, x.data);
}

TEST(ConstIMatMul, IdentityMatrix) {
  EXPECT_EQ(EvalI1(OpKind::kConstIMatMul, ShapeParam({3, 3}), {}).data, (IV{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_THAT(EvalF1(OpKind::kConstIMatMul, ShapeParam({3, 3}), {}).data, Near({1, 0, 0, 0, 1, 0, 0, 0, 1}));
  IntTensor id = EvalI1(OpKind::kConstIMatMul, ShapeParam({3, 3}), {});
  ExpectBoth(OpKind::kMatMul, {}, {IT({2, 3}, {1, -2, 3, 4, 5, -6}), id}, {2, 3}, {1, -2, 3, 4, 5, -6});
}

TEST(ConstOnes, AllOnes) {
  IntTensor oi = EvalI1(OpKind::kConstOnes, ShapeParam({2, 3}), {});
  EXPECT_EQ(oi.type.dims, (Dims{2, 3}));
  EXPECT_EQ(oi.data, IV(6, 1));
  EXPECT_THAT(EvalF1(OpKind::kConstOnes, ShapeParam({2, 3}), {}).data, Near(FV(6, 1.f)));
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
  ExpectSameTensors(EvalI(OpKind::kSplit, Axis(0), {&cd}), {&c, &d});
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
  ExpectSameTensors(EvalI(OpKind::kSplit, Axis(1), {&p1[0]}), {&a, &b});
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
  ExpectBoth(OpKind::kReshape, ShapeParam({3, 2}), {IT({2, 3}, {1, 2, 3, 4, 5, 6})}, {3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectBoth(OpKind::kReshape, ShapeParam({6}), {IT({2, 3}, {1, 2, 3, 4, 5, 6})}, {6}, {1, 2, 3, 4, 5, 6});
  // Reshaping a strided (transposed, not shuffled) view reshapes its logical values.
  IntTensor x = IT({2, 3}, {1, 2, 3, 4, 5, 6});
  IntTensor t = EvalI1(OpKind::kTranspose, Perm({1, 0}, false), {&x});
  IntTensor r = EvalI1(OpKind::kReshape, ShapeParam({6}), {&t});
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

TEST(EvaluateGraph, ConvBiasIsAddedBeforeTheActivation) {
  // 1x1 convolution of one channel into two, weights 1 and -1, biases -2 and 3:
  // relu(x - 2) and relu(-x + 3).
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 1, 1, 4}));
  TensorRef w = g.AddInput("w", F32({2, 1, 1, 1}));
  TensorRef b = g.AddInput("b", F32({2}));
  OpParams p;
  p.activation = Activation::kRelu;
  auto y = g.AddOp1(OpKind::kConv2D, p, {x, w, b});
  ASSERT_TRUE(y.ok()) << y.status();
  g.AddOutput("y", *y);
  std::map<std::string, FloatTensor> feeds = {{"x", FT({1, 1, 1, 4}, {0.f, 1.f, 2.f, 5.f})},
                                              {"w", FT({2, 1, 1, 1}, {1.f, -1.f})},
                                              {"b", FT({2}, {-2.f, 3.f})}};
  auto r = EvaluateFloat(g, feeds);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].data, Near({0.f, 0.f, 0.f, 3.f, 3.f, 2.f, 1.f, 0.f}));
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
  auto cp = g.AddOp1(OpKind::kConstPool, ShapeParam({1, 1, 3, 3}), {});
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
