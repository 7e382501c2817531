// Graph inputs with symbolic dimensions: bound to the shapes the user gives
// (--input-shape), else to 1 with a note, and the exported model keeps the
// symbolic dimensions it declared.
#include <string>
#include <vector>

#include "onnx_io/onnx_export.h"
#include "onnx_io/onnx_import.h"
#include "onnx_io/onnx_test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

using ::testing::HasSubstr;
using namespace onnx_test;  // NOLINT: the model builders

// x: [N, 3, 8, 8] -> Conv -> Relu -> y: [N, 4, 8, 8]
std::string DynamicBatchModel() {
  ModelSpec spec;
  spec.ir_version = 9;
  spec.opset = 18;
  spec.inputs = {Value("x", {"N", 3, 8, 8})};
  spec.outputs = {Value("y", {"N", 4, 8, 8})};
  spec.initializers = {FloatInit("w", {4, 3, 3, 3}, std::vector<float>(4 * 3 * 3 * 3, 0.05f))};
  spec.nodes = {MakeNode("Conv", {"x", "w"}, {"c"}, {MakeIntsAttribute("pads", {1, 1, 1, 1})}),
                MakeNode("Relu", {"c"}, {"y"})};
  return Build(spec);
}

std::vector<int64_t> InputDims(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kInput) return n.output_types[0].dims;
  }
  return {};
}

TEST(OnnxInputShapeTest, GivenShapeBindsTheSymbolicBatchAndExportKeepsTheSymbol) {
  OnnxImportOptions options;
  options.input_shapes = {{"x", {4, 3, 8, 8}}};
  auto model = ImportOnnx(DynamicBatchModel(), options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(InputDims(model->graph), (std::vector<int64_t>{4, 3, 8, 8}));
  EXPECT_EQ(model->graph.type(model->graph.outputs()[0].tensor).dims, (std::vector<int64_t>{4, 4, 8, 8}));
  for (const std::string& note : model->import_notes) EXPECT_THAT(note, ::testing::Not(HasSubstr("bound to")));
  auto exported = ExportOnnx(*model, model->graph);
  ASSERT_TRUE(exported.ok()) << exported.status();
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*exported));
  EXPECT_EQ(out.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(out.graph().output(0).type().tensor_type().shape().dim(0).dim_param(), "N");
}

TEST(OnnxInputShapeTest, WithoutAShapeTheBatchIsOneAndTheReportSaysSo) {
  auto model = ImportOnnx(DynamicBatchModel());
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(InputDims(model->graph), (std::vector<int64_t>{1, 3, 8, 8}));
  ASSERT_FALSE(model->import_notes.empty());
  EXPECT_THAT(model->import_notes[0], HasSubstr("x[0] 'N'"));
  EXPECT_THAT(model->import_notes[0], HasSubstr("--input-shape"));
}

TEST(OnnxInputShapeTest, ShapesThatDoNotFitAreClearErrors) {
  const std::string bytes = DynamicBatchModel();
  OnnxImportOptions options;
  options.input_shapes = {{"x", {4, 3, 8}}};
  auto rank = ImportOnnx(bytes, options);
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(rank.status().message(), HasSubstr("has rank 3; the graph input has rank 4"));
  options.input_shapes = {{"x", {4, 5, 8, 8}}};
  auto fixed = ImportOnnx(bytes, options);
  ASSERT_FALSE(fixed.ok());
  EXPECT_THAT(fixed.status().message(), HasSubstr("dimension 1 of the graph input is fixed at 3"));
  options.input_shapes = {{"image", {1, 3, 8, 8}}};
  auto name = ImportOnnx(bytes, options);
  ASSERT_FALSE(name.ok());
  EXPECT_THAT(name.status().message(), HasSubstr("'image', which is not a graph input; the inputs are: x"));
}

TEST(OnnxInputShapeTest, ParsesNameEqualsDims) {
  auto shapes = ParseInputShapes({"x=1x3x224x224", "mask=2"});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(shapes->at("x"), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(shapes->at("mask"), (std::vector<int64_t>{2}));
  for (const std::string bad : {"x", "=1x3", "x=", "x=1x0", "x=1xN", "x=1x-3"}) {
    EXPECT_FALSE(ParseInputShapes({bad}).ok()) << bad;
  }
  EXPECT_THAT(ParseInputShapes({"x=1", "x=2"}).status().message(), HasSubstr("twice"));
}

}  // namespace
}  // namespace taso
