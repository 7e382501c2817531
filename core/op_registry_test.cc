// Shape inference: output types on good inputs, clear errors on bad ones.
#include "core/op_registry.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"

namespace taso {
namespace {

using ::testing::HasSubstr;

using ::taso::testing::Axis;
using ::taso::testing::F32;

TEST(ShapeInference, ConvSameAndValid) {
  OpParams p;
  p.stride_h = p.stride_w = 2;
  auto out = InferOutputTypes(OpKind::kConv2D, p, {F32({1, 4, 5, 5}), F32({8, 4, 3, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{1, 8, 3, 3}));
  p.padding = Padding::kValid;
  out = InferOutputTypes(OpKind::kConv2D, p, {F32({1, 4, 5, 5}), F32({8, 4, 3, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{1, 8, 2, 2}));
}

TEST(ShapeInference, GroupedConv) {
  auto out = InferOutputTypes(OpKind::kConv2D, OpParams{}, {F32({2, 4, 5, 5}), F32({4, 1, 3, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{2, 4, 5, 5}));
}

TEST(ShapeInference, WindowArithmetic) {
  // SAME: out = ceil(in/stride); total padding split with the smaller half first.
  auto g = ComputeWindow(5, 3, 2, Padding::kSame);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->out, 3);
  EXPECT_EQ(g->pad_before, 1);
  g = ComputeWindow(6, 3, 2, Padding::kSame);  // total pad 1: nothing before, 1 after
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->out, 3);
  EXPECT_EQ(g->pad_before, 0);
  g = ComputeWindow(7, 3, 2, Padding::kValid);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->out, 3);
  EXPECT_FALSE(ComputeWindow(2, 3, 1, Padding::kValid).ok());
}

TEST(ShapeInferenceErrors, WrongRank) {
  auto out = InferOutputTypes(OpKind::kConv2D, OpParams{}, {F32({4, 5, 5}), F32({4, 4, 3, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("conv2d"));
  EXPECT_THAT(out.status().message(), HasSubstr("4-D"));
  EXPECT_THAT(out.status().message(), HasSubstr("f32[4,5,5]"));

  out = InferOutputTypes(OpKind::kMatMul, OpParams{}, {F32({4}), F32({4, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("matmul"));
  EXPECT_THAT(out.status().message(), HasSubstr("rank"));

  out = InferOutputTypes(OpKind::kPoolMax, OpParams{}, {F32({4, 4})});
  EXPECT_FALSE(out.ok());
  out = InferOutputTypes(OpKind::kScalarMul, OpParams{}, {F32({2, 4}), F32({1})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("0-D"));
}

TEST(ShapeInferenceErrors, MismatchedChannels) {
  // 4 input channels cannot feed a weight expecting 3 per group.
  auto out = InferOutputTypes(OpKind::kConv2D, OpParams{}, {F32({1, 4, 5, 5}), F32({4, 3, 3, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("4 channels"));
  EXPECT_THAT(out.status().message(), HasSubstr("f32[4,3,3,3]"));
  // 2 groups of 2 channels, but 3 output channels do not divide into 2 groups.
  out = InferOutputTypes(OpKind::kConv2D, OpParams{}, {F32({1, 4, 5, 5}), F32({3, 2, 3, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("groups"));
  out = InferOutputTypes(OpKind::kMatMul, OpParams{}, {F32({2, 4}), F32({3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("inner dimensions differ (4 vs 3)"));
  out = InferOutputTypes(OpKind::kEwAdd, OpParams{}, {F32({2, 4}), F32({2, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("broadcast"));
  OpParams bn;
  out = InferOutputTypes(OpKind::kBatchNorm, bn, {F32({1, 4, 2, 2}), F32({4}), F32({4}), F32({3}), F32({4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("C=4"));
}

TEST(ShapeInferenceErrors, BadAxis) {
  auto out = InferOutputTypes(OpKind::kConcat, Axis(2), {F32({2, 4}), F32({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("axis 2 out of range for rank 2"));
  out = InferOutputTypes(OpKind::kConcat, Axis(-1), {F32({2, 4}), F32({2, 4})});
  EXPECT_FALSE(out.ok());
  out = InferOutputTypes(OpKind::kConcat, Axis(1), {F32({2, 4}), F32({3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("dimension 0 differs"));
  out = InferOutputTypes(OpKind::kSplit, Axis(3), {F32({2, 4})});
  EXPECT_FALSE(out.ok());
  OpParams t;
  t.perm = {0, 0};
  out = InferOutputTypes(OpKind::kTranspose, t, {F32({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("not a permutation"));
}

TEST(ShapeInferenceErrors, SplitWithoutConcat) {
  auto out = InferOutputTypes(OpKind::kSplit, Axis(1), {F32({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("no recorded concat point"));
  // Concat on axis 0 records nothing on axis 1.
  auto cat = InferOutputTypes(OpKind::kConcat, Axis(0), {F32({2, 4}), F32({2, 4})});
  ASSERT_TRUE(cat.ok());
  EXPECT_FALSE(InferOutputTypes(OpKind::kSplit, Axis(1), {(*cat)[0]}).ok());
  EXPECT_TRUE(InferOutputTypes(OpKind::kSplit, Axis(0), {(*cat)[0]}).ok());
}

TEST(ShapeInference, SplitTreesNest) {
  auto ab = InferOutputTypes(OpKind::kConcat, Axis(1), {F32({2, 1}), F32({2, 2})});
  ASSERT_TRUE(ab.ok());
  auto abc = InferOutputTypes(OpKind::kConcat, Axis(1), {(*ab)[0], F32({2, 3})});
  ASSERT_TRUE(abc.ok());
  EXPECT_EQ(SplitTreeToString((*abc)[0].split[1]), "(3:(1:.,.),.)");
  // A 3-way concat records the same left-nested tree.
  auto abc3 = InferOutputTypes(OpKind::kConcat, Axis(1), {F32({2, 1}), F32({2, 2}), F32({2, 3})});
  ASSERT_TRUE(abc3.ok());
  EXPECT_EQ((*abc)[0], (*abc3)[0]);
  // Splitting peels off the last part, then the first two.
  auto parts = InferOutputTypes(OpKind::kSplit, Axis(1), {(*abc)[0]});
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ((*parts)[0], (*ab)[0]);
  EXPECT_EQ((*parts)[1], F32({2, 3}));
  // concat(a, concat(b, c)) records a different tree: concat is not associative here.
  auto bc = InferOutputTypes(OpKind::kConcat, Axis(1), {F32({2, 2}), F32({2, 3})});
  auto a_bc = InferOutputTypes(OpKind::kConcat, Axis(1), {F32({2, 1}), (*bc)[0]});
  ASSERT_TRUE(a_bc.ok());
  EXPECT_NE((*a_bc)[0], (*abc)[0]);
}

TEST(ShapeInference, SplitInfoFollowsOperators) {
  auto cat = InferOutputTypes(OpKind::kConcat, Axis(1), {F32({2, 4}), F32({2, 4})});
  ASSERT_TRUE(cat.ok());
  const TensorType x = (*cat)[0];
  // relu keeps it; transpose moves it; matmul keeps the right operand's columns.
  EXPECT_EQ((*InferOutputTypes(OpKind::kRelu, OpParams{}, {x}))[0], x);
  OpParams t;
  t.perm = {1, 0};
  const TensorType xt = (*InferOutputTypes(OpKind::kTranspose, t, {x}))[0];
  EXPECT_TRUE(xt.split[0] != nullptr);
  EXPECT_TRUE(xt.split[1] == nullptr);
  const TensorType mm = (*InferOutputTypes(OpKind::kMatMul, OpParams{}, {F32({3, 2}), x}))[0];
  EXPECT_TRUE(SplitTreeEqual(mm.split[1], x.split[1]));
  // Adding a tensor without the record drops it.
  const TensorType sum = (*InferOutputTypes(OpKind::kEwAdd, OpParams{}, {x, F32({2, 8})}))[0];
  EXPECT_FALSE(sum.has_split_info());
}

TEST(ShapeInference, TransposeLayout) {
  OpParams t;
  t.perm = {1, 0};
  t.shuffle = false;
  auto out = InferOutputTypes(OpKind::kTranspose, t, {F32({2, 4})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ((*out)[0].strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ((*out)[0].ToString(), "f32[4,2]{strides=1,4}");
  t.shuffle = true;
  out = InferOutputTypes(OpKind::kTranspose, t, {F32({2, 4})});
  EXPECT_TRUE((*out)[0].is_row_major());
}

TEST(ShapeInference, EnlargeAndMergeGConv) {
  OpParams e;
  e.kernel_h = e.kernel_w = 3;
  auto out = InferOutputTypes(OpKind::kEnlarge, e, {F32({4, 4, 1, 3})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{4, 4, 3, 3}));
  // 2 -> 3 cannot stay centred.
  out = InferOutputTypes(OpKind::kEnlarge, e, {F32({4, 4, 2, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("even"));
  OpParams m;
  m.groups = 4;
  m.count = 2;
  out = InferOutputTypes(OpKind::kMergeGConv, m, {F32({8, 1, 3, 3})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{8, 2, 3, 3}));
  m.count = 3;
  EXPECT_FALSE(InferOutputTypes(OpKind::kMergeGConv, m, {F32({8, 1, 3, 3})}).ok());
}

TEST(ShapeInference, ConvBiasIsOnePerOutputChannel) {
  auto out = InferOutputTypes(OpKind::kConv2D, OpParams{}, {F32({1, 4, 5, 5}), F32({8, 4, 3, 3}), F32({8})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{1, 8, 5, 5}));
  out = InferOutputTypes(OpKind::kConv2D, OpParams{}, {F32({1, 4, 5, 5}), F32({8, 4, 3, 3}), F32({8, 1, 1})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("one value per output channel (8)"));
  out = InferOutputTypes(OpKind::kConv2D, OpParams{},
                         {F32({1, 4, 5, 5}), F32({8, 4, 3, 3}), F32({8}), F32({8})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("takes 2 to 3 inputs, got 4"));
}

TEST(ShapeInference, ConstantsAndArity) {
  OpParams c;
  c.shape = {4, 1, 3, 3};
  EXPECT_TRUE(InferOutputTypes(OpKind::kConstPool, c, {}).ok());
  c.shape = {4, 4, 3, 3};
  EXPECT_TRUE(InferOutputTypes(OpKind::kConstIConv, c, {}).ok());
  EXPECT_FALSE(InferOutputTypes(OpKind::kConstPool, c, {}).ok());
  c.shape = {4, 3};
  auto out = InferOutputTypes(OpKind::kConstIMatMul, c, {});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("square"));
  out = InferOutputTypes(OpKind::kRelu, OpParams{}, {F32({2}), F32({2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("takes 1 inputs, got 2"));
  OpParams r;
  r.shape = {3, 3};
  out = InferOutputTypes(OpKind::kReshape, r, {F32({2, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("9 elements, input has 8"));
}

TEST(ShapeInference, ExplicitPadding) {
  OpParams p;
  p.padding = Padding::kExplicit;
  p.pads = {1, 1, 1, 1};
  p.stride_h = p.stride_w = 2;
  // ResNet's stride-2 3x3 with pads 1: 56 -> 28, the first window starts one
  // row up (SAME would start at 0), and the last padded row is never read.
  auto g = ComputeWindow(p, 0, 56, 3);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->out, 28);
  EXPECT_EQ(g->pad_before, 1);
  EXPECT_EQ(g->pad_after, 0);
  auto out = InferOutputTypes(OpKind::kConv2D, p, {F32({1, 64, 56, 56}), F32({128, 64, 3, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims, (std::vector<int64_t>{1, 128, 28, 28}));
  EXPECT_EQ(CanonicalParams(OpKind::kConv2D, p), "stride=2x2,pad=explicit:1,1,1,1,act=none");
  // Not SAME here, so it stays explicit.
  OpParams q = p;
  EXPECT_FALSE(NormalizePadding(q, 56, 56, 3, 3));
  EXPECT_EQ(q.padding, Padding::kExplicit);
  // On an odd input the same pads are exactly SAME; pads of 0 are VALID.
  EXPECT_TRUE(NormalizePadding(q, 57, 57, 3, 3));
  EXPECT_EQ(q.padding, Padding::kSame);
  EXPECT_TRUE(q.pads.empty());
  OpParams one = p;
  one.stride_h = one.stride_w = 1;
  EXPECT_TRUE(NormalizePadding(one, 56, 56, 3, 3));  // stride 1, pads 1: SAME
  EXPECT_EQ(one.padding, Padding::kSame);
  OpParams zero = p;
  zero.pads = {0, 0, 0, 0};
  EXPECT_TRUE(NormalizePadding(zero, 56, 56, 3, 3));
  EXPECT_EQ(zero.padding, Padding::kValid);
  // Bad pads are errors, never crashes.
  OpParams bad = p;
  bad.pads = {1, 1};
  EXPECT_FALSE(InferOutputTypes(OpKind::kConv2D, bad, {F32({1, 4, 8, 8}), F32({4, 4, 3, 3})}).ok());
  bad.pads = {-1, 0, 0, 0};
  EXPECT_FALSE(InferOutputTypes(OpKind::kConv2D, bad, {F32({1, 4, 8, 8}), F32({4, 4, 3, 3})}).ok());
  bad.pads = {3, 0, 0, 0};
  bad.kernel_h = bad.kernel_w = 3;
  auto too_big = InferOutputTypes(OpKind::kPoolMax, bad, {F32({1, 4, 8, 8})});
  EXPECT_FALSE(too_big.ok());
}

TEST(ShapeInference, OpaqueOperatorsMayCarryUnknownDims) {
  OpParams p;
  p.opaque.op_type = "NonZero";
  p.opaque.output_types = {TensorType::RowMajor(DType::kInt64, {2, -1})};
  TensorType unknown = F32({-1, 3});
  EXPECT_TRUE(InferOutputTypes(OpKind::kOpaque, p, {unknown}).ok());
  EXPECT_FALSE(InferOutputTypes(OpKind::kRelu, OpParams{}, {unknown}).ok());
}

TEST(ShapeInference, OpaqueSlotsNameEachOperandOnce) {
  OpParams p;
  p.opaque.op_type = "GRU";
  p.opaque.output_types = {F32({1, 1, 4}), F32({1, 1, 4})};
  p.opaque.input_slots = {0, 1, 2, OpaqueInfo::kOmitted, OpaqueInfo::kOmitted, 3};
  const std::vector<TensorType> in = {F32({1, 1, 2}), F32({1, 12, 2}), F32({1, 12, 4}), F32({1, 1, 4})};
  EXPECT_TRUE(InferOutputTypes(OpKind::kOpaque, p, in).ok());
  // An outer-scope value past the node's own inputs is allowed.
  std::vector<TensorType> outer = in;
  outer.push_back(F32({1}));
  EXPECT_TRUE(InferOutputTypes(OpKind::kOpaque, p, outer).ok());
  OpParams twice = p;
  twice.opaque.input_slots = {0, 1, 2, 2, OpaqueInfo::kOmitted, 3};
  EXPECT_FALSE(InferOutputTypes(OpKind::kOpaque, twice, in).ok());
  OpParams missing_output = p;
  missing_output.opaque.output_slots = {0, OpaqueInfo::kOmitted};
  EXPECT_FALSE(InferOutputTypes(OpKind::kOpaque, missing_output, in).ok());
  missing_output.opaque.output_slots = {OpaqueInfo::kOmitted, 1, 0};
  EXPECT_TRUE(InferOutputTypes(OpKind::kOpaque, missing_output, in).ok());
}

TEST(OpNames, RoundTrip) {
  for (OpKind k : AllOpKinds()) {
    ASSERT_TRUE(OpKindFromName(OpKindName(k)).has_value()) << OpKindName(k);
    EXPECT_EQ(*OpKindFromName(OpKindName(k)), k);
    EXPECT_STREQ(GetOpInfo(k).name, OpKindName(k));
  }
  EXPECT_FALSE(OpKindFromName("softmax").has_value());
}

}  // namespace
}  // namespace taso
