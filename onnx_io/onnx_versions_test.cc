// Models as current exporters write them (IR 9-12, opsets 18-26): they
// import, newer operator forms get the right shapes, and export keeps the
// input's versions.
#include "onnx_io/onnx_versions.h"

#include <string>
#include <vector>

#include "core/op_registry.h"
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

int CountKind(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

// The IR type of the opaque node imported from ONNX op `op_type`.
std::vector<int64_t> OpaqueOutputDims(const Graph& g, const std::string& op_type) {
  for (const Node& node : g.nodes()) {
    if (node.kind == OpKind::kOpaque && node.params.opaque.op_type == op_type) return node.output_types[0].dims;
  }
  ADD_FAILURE() << "no opaque " << op_type;
  return {};
}

ModelSpec ConvThen(int64_t ir, int opset, std::vector<onnx::NodeProto> after, std::vector<Dim> out_dims) {
  ModelSpec spec;
  spec.ir_version = ir;
  spec.opset = opset;
  spec.inputs = {Value("x", {1, 3, 8, 8})};
  spec.outputs = {Value("y", out_dims)};
  spec.initializers = {FloatInit("w", {4, 3, 3, 3}, std::vector<float>(4 * 3 * 3 * 3, 0.05f))};
  spec.nodes = {MakeNode("Conv", {"x", "w"}, {"c"}, {MakeIntsAttribute("pads", {1, 1, 1, 1})})};
  for (auto& n : after) spec.nodes.push_back(std::move(n));
  return spec;
}

onnx::ModelProto Parse(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  return m;
}

TEST(OnnxVersionsTest, CurrentIrVersionsAndOpsetsImportAndExportTheirOwnVersions) {
  for (auto [ir, opset] : std::vector<std::pair<int64_t, int>>{{8, 17}, {9, 19}, {10, 21}, {11, 23}, {12, 26}}) {
    SCOPED_TRACE(testing::Message() << "IR " << ir << ", opset " << opset);
    const std::string bytes = Build(ConvThen(ir, opset, {MakeNode("Relu", {"c"}, {"y"})}, {1, 4, 8, 8}));
    auto model = ImportOnnx(bytes);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(CountKind(model->graph, OpKind::kConv2D), 1);
    EXPECT_EQ(CountKind(model->graph, OpKind::kRelu), 1);
    auto exported = ExportOnnx(*model, model->graph);
    ASSERT_TRUE(exported.ok()) << exported.status();
    const onnx::ModelProto out = Parse(*exported);
    EXPECT_EQ(out.ir_version(), ir);
    ASSERT_EQ(out.opset_import_size(), 1);
    EXPECT_EQ(out.opset_import(0).version(), opset);
    EXPECT_TRUE(ImportOnnx(*exported).ok());
  }
}

TEST(OnnxVersionsTest, ReduceWithAxesInputHasTheReducedShapeNotAFullReduction) {
  ModelSpec spec = ConvThen(10, 18, {MakeNode("ReduceMean", {"c", "axes"}, {"m"}), MakeNode("Relu", {"m"}, {"y"})},
                            {1, 4, 1, 1});
  spec.initializers.push_back(IntInit("axes", {2, 3}));
  auto model = ImportOnnx(Build(spec));
  ASSERT_TRUE(model.ok()) << model.status();
  // ONNX 1.12's ReduceMean-13 would ignore the input and reduce every axis.
  EXPECT_EQ(OpaqueOutputDims(model->graph, "ReduceMean"), (std::vector<int64_t>{1, 4, 1, 1}));
  EXPECT_EQ(CountKind(model->graph, OpKind::kRelu), 1);
  // Export writes the node as the model has it: axes still an input.
  auto exported = ExportOnnx(*model, model->graph);
  ASSERT_TRUE(exported.ok()) << exported.status();
  const onnx::ModelProto out = Parse(*exported);
  for (const auto& node : out.graph().node()) {
    if (node.op_type() == "ReduceMean") {
      EXPECT_EQ(node.input_size(), 2);
    }
  }
}

TEST(OnnxVersionsTest, ReduceWithNoAxesAndNoopIsTheInput) {
  ModelSpec spec = ConvThen(10, 18, {MakeNode("ReduceMax", {"c"}, {"y"}, {MakeIntAttribute("noop_with_empty_axes", 1)})},
                            {1, 4, 8, 8});
  auto model = ImportOnnx(Build(spec));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OpaqueOutputDims(model->graph, "ReduceMax"), (std::vector<int64_t>{1, 4, 8, 8}));
}

TEST(OnnxVersionsTest, SplitWithNumOutputsIsLowered) {
  ModelSpec spec = ConvThen(9, 18,
                            {MakeNode("Split", {"c"}, {"a", "b"}, {MakeIntAttribute("axis", 1), MakeIntAttribute("num_outputs", 2)}),
                             MakeNode("Add", {"a", "b"}, {"y"})},
                            {1, 2, 8, 8});
  auto model = ImportOnnx(Build(spec));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kSplit), 1);
  EXPECT_EQ(CountKind(model->graph, OpKind::kOpaque), 0);
}

TEST(OnnxVersionsTest, NewerOperatorsKeepTheirShapes) {
  ModelSpec spec = ConvThen(10, 21,
                            {MakeNode("Gelu", {"c"}, {"g"}),
                             MakeNode("GroupNormalization", {"g", "s", "b"}, {"n"}, {MakeIntAttribute("num_groups", 2)}),
                             MakeNode("Relu", {"n"}, {"y"})},
                            {1, 4, 8, 8});
  spec.initializers.push_back(FloatInit("s", {4}, {1, 1, 1, 1}));
  spec.initializers.push_back(FloatInit("b", {4}, {0, 0, 0, 0}));
  auto model = ImportOnnx(Build(spec));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OpaqueOutputDims(model->graph, "Gelu"), (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_EQ(OpaqueOutputDims(model->graph, "GroupNormalization"), (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_EQ(CountKind(model->graph, OpKind::kRelu), 1);
}

TEST(OnnxVersionsTest, AttributesNewerVersionsAddedDoNotFailTheCheck) {
  // Cast-19's saturate and AveragePool-19's dilations.
  ModelSpec spec = ConvThen(9, 19,
                            {MakeNode("Cast", {"c"}, {"f"}, {MakeIntAttribute("to", onnx::TensorProto::FLOAT),
                                                            MakeIntAttribute("saturate", 1)}),
                             MakeNode("AveragePool", {"f"}, {"y"}, {MakeIntsAttribute("kernel_shape", {2, 2}),
                                                                    MakeIntsAttribute("dilations", {2, 2})})},
                            {1, 4, 6, 6});
  auto model = ImportOnnx(Build(spec));
  ASSERT_TRUE(model.ok()) << model.status();
  // Dilated average pooling is not the IR's pool: it stays opaque, 8 - 2*(2-1) - 1 + 1 = 6 wide.
  EXPECT_EQ(OpaqueOutputDims(model->graph, "AveragePool"), (std::vector<int64_t>{1, 4, 6, 6}));
}

TEST(OnnxVersionsTest, PadAndResizeForListedAxesGetTheirShapes) {
  // Pad-18 pads H by 1+2 and W by 0+3; Resize-18 doubles H and W, listed by axes.
  ModelSpec spec = ConvThen(10, 19,
                            {MakeNode("Pad", {"c", "pads", "", "pad_axes"}, {"p"}),
                             MakeNode("Resize", {"p", "", "scales"}, {"y"},
                                      {MakeIntsAttribute("axes", {-2, -1}), MakeIntAttribute("antialias", 0)})},
                            {1, 4, 22, 22});
  spec.initializers.push_back(IntInit("pads", {1, 0, 2, 3}));
  spec.initializers.push_back(IntInit("pad_axes", {2, 3}));
  spec.initializers.push_back(FloatInit("scales", {2}, {2.f, 2.f}));
  auto model = ImportOnnx(Build(spec));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(OpaqueOutputDims(model->graph, "Pad"), (std::vector<int64_t>{1, 4, 11, 11}));
  EXPECT_EQ(OpaqueOutputDims(model->graph, "Resize"), (std::vector<int64_t>{1, 4, 22, 22}));
}

TEST(OnnxVersionsTest, UnknownOperatorsAndVersionsAreClearErrors) {
  auto unknown = ImportOnnx(Build(ConvThen(10, 21, {MakeNode("FancyNorm", {"c"}, {"y"})}, {1, 4, 8, 8})));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("operator 'FancyNorm' at ai.onnx opset 21 is not supported"));

  auto opset = ImportOnnx(Build(ConvThen(12, 27, {MakeNode("Relu", {"c"}, {"y"})}, {1, 4, 8, 8})));
  ASSERT_FALSE(opset.ok());
  EXPECT_THAT(opset.status().message(), HasSubstr("opset 27"));

  auto ir = ImportOnnx(Build(ConvThen(13, 21, {MakeNode("Relu", {"c"}, {"y"})}, {1, 4, 8, 8})));
  ASSERT_FALSE(ir.ok());
  EXPECT_THAT(ir.status().message(), HasSubstr("IR version 13"));
}

TEST(OnnxVersionsTest, TheBridgeLeavesTheModelAloneAndNamesTheSameValues) {
  ModelSpec spec = ConvThen(10, 20, {MakeNode("Gelu", {"c"}, {"y"})}, {1, 4, 8, 8});
  const onnx::ModelProto model = BuildProto(spec);
  ASSERT_TRUE(onnx_internal::NeedsBridge(model));
  auto bridged = onnx_internal::BridgeToLibraryVersions(model);
  ASSERT_TRUE(bridged.ok()) << bridged.status();
  EXPECT_EQ(bridged->ir_version(), onnx_internal::kLibraryIrVersion);
  ASSERT_EQ(bridged->graph().node_size(), model.graph().node_size());
  EXPECT_EQ(bridged->graph().node(1).op_type(), "Identity");
  EXPECT_EQ(bridged->graph().node(1).output(0), "y");
  EXPECT_EQ(model.graph().node(1).op_type(), "Gelu");
  EXPECT_TRUE(onnx_internal::CheckModelAnyVersion(model).ok());
}

}  // namespace
}  // namespace taso
