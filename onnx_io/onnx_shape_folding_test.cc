// Opaque operators whose shape-determining operands are computed from
// constants and static shapes (as PyTorch exports them) get static shapes.
#include <algorithm>
#include <string>
#include <vector>

#include "onnx_io/onnx_import.h"
#include "onnx_io/onnx_test_builders.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

using namespace onnx_test;  // NOLINT: the model builders

onnx::TensorProto IntScalar(const std::string& name, int64_t v) {
  onnx::TensorProto t = IntInit(name, {v});
  t.clear_dims();
  return t;
}

onnx::NodeProto IntConstant(const std::string& out, const onnx::TensorProto& value) {
  return MakeNode("Constant", {}, {out}, {onnx_internal::MakeTensorAttribute("value", value)});
}

const Node* OpaqueNamed(const Graph& g, const std::string& op_type, int nth = 0) {
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kOpaque && n.params.opaque.op_type == op_type && nth-- == 0) return &n;
  }
  return nullptr;
}

int CountOps(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

// torch.chunk(x, 2, dim=1) as PyTorch 1.13 exports it: the split point is
// (Shape(x)[1] + 1) / 2, which ONNX 1.12's data propagation cannot follow
// through Div, then each half is a Slice. The second half feeds a Conv.
ModelSpec ChunkIntoConv() {
  ModelSpec s;
  s.inputs = {Value("x", {"N", 8, 4, 4})};
  s.outputs = {Value("y", {"N", 8, 4, 4})};
  s.initializers = {FloatInit("w", {4, 4, 3, 3}, std::vector<float>(144, 0.1f)), IntInit("zero", {0}),
                    IntInit("axis1", {1}), IntInit("two1d", {2})};
  s.nodes = {
      MakeNode("Shape", {"x"}, {"shape"}),
      IntConstant("index", IntScalar("index", 1)),
      MakeNode("Gather", {"shape", "index"}, {"channels"}, {MakeIntAttribute("axis", 0)}),
      IntConstant("one", IntScalar("one", 1)),
      IntConstant("two", IntScalar("two", 2)),
      MakeNode("Add", {"channels", "one"}, {"rounded_up"}),
      MakeNode("Div", {"rounded_up", "two"}, {"half"}),
      MakeNode("Unsqueeze", {"half", "zero"}, {"half1d"}),
      MakeNode("Mul", {"half1d", "two1d"}, {"full1d"}),
      MakeNode("Slice", {"x", "zero", "half1d", "axis1"}, {"first"}),
      MakeNode("Slice", {"x", "half1d", "full1d", "axis1"}, {"second"}),
      MakeNode("Conv", {"second", "w"}, {"conv"}, {MakeIntsAttribute("pads", {1, 1, 1, 1})}),
      MakeNode("Concat", {"first", "conv"}, {"y"}, {MakeIntAttribute("axis", 1)}),
  };
  return s;
}

TEST(OnnxShapeFoldingTest, SliceWithComputedEndsFeedsConv) {
  OnnxImportOptions options;
  options.default_dim = 2;
  auto model = ImportOnnx(Build(ChunkIntoConv()), options);
  ASSERT_TRUE(model.ok()) << model.status();
  // The batch is bound to 2 (noted); folding went through (no note of it stopping).
  for (const std::string& note : model->import_notes) EXPECT_EQ(note.find("folding"), std::string::npos) << note;
  for (int i = 0; i < 2; ++i) {
    const Node* slice = OpaqueNamed(model->graph, "Slice", i);
    ASSERT_NE(slice, nullptr) << i;
    EXPECT_EQ(slice->output_types[0].dims, (std::vector<int64_t>{2, 4, 4, 4})) << i;
  }
  // With the Slice's shape known, the Conv reading it is an IR operator.
  EXPECT_EQ(CountOps(model->graph, OpKind::kConv2D), 1);
}

// x.reshape(x.shape[0], -1) as PyTorch exports it: Shape→Gather→Unsqueeze→
// Concat→Reshape, then a MatMul.
TEST(OnnxShapeFoldingTest, ReshapeFromComputedShapeFeedsMatMul) {
  ModelSpec s;
  s.inputs = {Value("x", {"N", 3, 4})};
  s.outputs = {Value("y", {"N", 5})};
  s.initializers = {FloatInit("w", {12, 5}, std::vector<float>(60, 0.5f)), IntInit("axes0", {0}),
                    IntInit("minus_one", {-1})};
  s.nodes = {
      MakeNode("Shape", {"x"}, {"shape"}),
      IntConstant("index", IntScalar("index", 0)),
      MakeNode("Gather", {"shape", "index"}, {"batch"}, {MakeIntAttribute("axis", 0)}),
      MakeNode("Unsqueeze", {"batch", "axes0"}, {"batch1d"}),
      MakeNode("Concat", {"batch1d", "minus_one"}, {"target"}, {MakeIntAttribute("axis", 0)}),
      MakeNode("Reshape", {"x", "target"}, {"flat"}),
      MakeNode("MatMul", {"flat", "w"}, {"y"}),
  };
  OnnxImportOptions options;
  options.default_dim = 3;
  auto model = ImportOnnx(Build(s), options);
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* reshape = OpaqueNamed(model->graph, "Reshape");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->output_types[0].dims, (std::vector<int64_t>{3, 12}));
  EXPECT_EQ(CountOps(model->graph, OpKind::kMatMul), 1);
  // Shape and Gather stay in the model (opaque, exported verbatim), typed.
  const Node* gather = OpaqueNamed(model->graph, "Gather");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->output_types[0].dims, std::vector<int64_t>{});
}

TEST(OnnxShapeFoldingTest, SliceWithConstantOperandsFeedsMatMul) {
  ModelSpec s;
  s.inputs = {Value("x", {4, 6})};
  s.outputs = {Value("y", {2, 3})};
  s.initializers = {FloatInit("w", {6, 3}, std::vector<float>(18, 0.5f)), IntInit("starts", {1}),
                    IntInit("axes", {0})};
  s.nodes = {IntConstant("ends", IntInit("ends", {3})), MakeNode("Slice", {"x", "starts", "ends", "axes"}, {"rows"}),
             MakeNode("MatMul", {"rows", "w"}, {"y"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* slice = OpaqueNamed(model->graph, "Slice");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->output_types[0].dims, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(CountOps(model->graph, OpKind::kMatMul), 1);
}

// F.pad(x, (1, 1, 2, 2), mode="reflect") as PyTorch 1.13 exports it: the
// pad list zero-extended (ConstantOfShape, Concat), reshaped to pairs,
// reversed (Slice with step -1), transposed and flattened into ONNX's order.
TEST(OnnxShapeFoldingTest, PyTorchsPadListChainFeedsPadThenConv) {
  onnx::TensorProto zero = IntScalar("zero_value", 0);
  zero.add_dims(1);
  ModelSpec s;
  s.inputs = {Value("x", {1, 4, 8, 8})};
  s.outputs = {Value("y", {1, 4, 12, 10})};
  s.initializers = {FloatInit("w", {4, 4, 1, 1}, std::vector<float>(16, 0.25f))};
  s.nodes = {
      IntConstant("zeros_count", IntInit("c0", {4})),
      IntConstant("torch_pads", IntInit("c1", {1, 1, 2, 2})),
      MakeNode("ConstantOfShape", {"zeros_count"}, {"zeros"}, {onnx_internal::MakeTensorAttribute("value", zero)}),
      MakeNode("Concat", {"torch_pads", "zeros"}, {"extended"}, {MakeIntAttribute("axis", 0)}),
      IntConstant("pairs_shape", IntInit("c2", {-1, 2})),
      MakeNode("Reshape", {"extended", "pairs_shape"}, {"pairs"}),
      IntConstant("starts", IntInit("c3", {-1})),
      IntConstant("ends", IntInit("c4", {-9223372036854775807LL})),
      IntConstant("axes", IntInit("c5", {0})),
      IntConstant("steps", IntInit("c6", {-1})),
      MakeNode("Slice", {"pairs", "starts", "ends", "axes", "steps"}, {"reversed"}),
      MakeNode("Transpose", {"reversed"}, {"by_side"}, {MakeIntsAttribute("perm", {1, 0})}),
      IntConstant("flat_shape", IntInit("c7", {-1})),
      MakeNode("Reshape", {"by_side", "flat_shape"}, {"flat"}),
      MakeNode("Cast", {"flat"}, {"pads"}, {MakeIntAttribute("to", onnx::TensorProto::INT64)}),
      MakeNode("Pad", {"x", "pads"}, {"padded"}, {onnx_internal::MakeStringAttribute("mode", "reflect")}),
      MakeNode("Conv", {"padded", "w"}, {"y"}),
  };
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* pad = OpaqueNamed(model->graph, "Pad");
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->output_types[0].dims, (std::vector<int64_t>{1, 4, 12, 10}));
  EXPECT_EQ(CountOps(model->graph, OpKind::kConv2D), 1);
}

// Ends read from a graph input are unknowable: import still succeeds, the
// Slice's output shape stays unknown (the numerical check reports it).
TEST(OnnxShapeFoldingTest, SliceWithRuntimeEndsStaysUnknown) {
  ModelSpec s;
  s.inputs = {Value("x", {4, 6}), Value("ends", {1}, onnx::TensorProto::INT64)};
  s.outputs = {Value("y", {"rows", 6})};
  s.initializers = {IntInit("starts", {0})};
  s.nodes = {MakeNode("Slice", {"x", "starts", "ends"}, {"y"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* slice = OpaqueNamed(model->graph, "Slice");
  ASSERT_NE(slice, nullptr);
  const std::vector<int64_t>& dims = slice->output_types[0].dims;
  EXPECT_TRUE(std::find(dims.begin(), dims.end(), -1) != dims.end());
}

}  // namespace
}  // namespace taso
