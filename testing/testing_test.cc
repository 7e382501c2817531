#include <vector>

#include "gtest/gtest.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"
#include "testing/tensors.h"

namespace taso::testing {
namespace {

TEST(TensorTypes, F32IsRowMajorFloat) {
  const TensorType t = F32({2, 3});
  EXPECT_EQ(t.dtype, DType::kFloat32);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Strided({2, 3}, {1, 2}).strides, (std::vector<int64_t>{1, 2}));
}

TEST(Tensors, AreRowMajorFloat32Values) {
  const IntTensor i = IntTensorOf({2}, {1, -1});
  EXPECT_EQ(i.type, F32({2}));
  EXPECT_EQ(i.data, (std::vector<int32_t>{1, -1}));
  const FloatTensor f = FloatTensorOf({1, 2}, {0.5f, 2});
  EXPECT_EQ(f.type, F32({1, 2}));
  EXPECT_EQ(f.data, (std::vector<float>{0.5f, 2}));
}

TEST(OpParamsShorthands, SetOnlyTheirFields) {
  const OpParams defaults;
  EXPECT_EQ(Axis(1).axis, 1);
  EXPECT_EQ(WithActivation(Activation::kRelu).activation, Activation::kRelu);
  EXPECT_EQ(Perm({1, 0}, false).perm, (std::vector<int>{1, 0}));
  EXPECT_FALSE(Perm({1, 0}, false).shuffle);
  EXPECT_EQ(ShapeParam({4, 4}).shape, (std::vector<int64_t>{4, 4}));
  const OpParams conv = ConvParams(2, Padding::kValid, Activation::kTanh);
  EXPECT_EQ(conv.stride_h, 2);
  EXPECT_EQ(conv.stride_w, 2);
  EXPECT_EQ(conv.padding, Padding::kValid);
  EXPECT_EQ(conv.activation, Activation::kTanh);
  EXPECT_EQ(conv.kernel_h, defaults.kernel_h);
  const OpParams window = Window(3, 2, 1, Padding::kSame);
  EXPECT_EQ(window.kernel_h, 3);
  EXPECT_EQ(window.kernel_w, 2);
  EXPECT_EQ(window.activation, defaults.activation);
  EXPECT_EQ(With(&OpParams::groups, 4).groups, 4);
}

TEST(GraphBuilder, BuildsNamedTensorsAndNumberedOutputs) {
  GraphBuilder b;
  const TensorRef x = b.In("x", {2, 4});
  const TensorRef w = b.W("w", {4, 4});
  b.Out(b.Op(OpKind::kMatMul, {x, w})).Out(x);
  ASSERT_EQ(b.graph.outputs().size(), 2u);
  EXPECT_EQ(b.graph.outputs()[0].name, "out0");
  EXPECT_EQ(b.graph.outputs()[1].name, "out1");
  EXPECT_EQ(b.graph.node(w.node).kind, OpKind::kWeight);
  EXPECT_EQ(b.OpN(OpKind::kSplit, {b.Op(OpKind::kConcat, {x, x}, Axis(1))}, Axis(1)).size(), 2u);
}

}  // namespace
}  // namespace taso::testing
