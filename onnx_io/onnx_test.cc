#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/interpreter.h"
#include "onnx_io/onnx_common.h"
#include "onnx_io/onnx_export.h"
#include "onnx_io/onnx_import.h"
#include "onnx_io/onnx_test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

using ::testing::HasSubstr;
using namespace onnx_test;  // NOLINT: the model builders

// --- Evaluation helpers ---

std::vector<float> Iota(int64_t n, float scale = 0.1f, float offset = -1.f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 23);
  return v;
}

FloatTensor Feed(const std::vector<int64_t>& dims, std::vector<float> data) {
  return {TensorType::RowMajor(DType::kFloat32, dims), std::move(data)};
}

std::vector<FloatTensor> Eval(const Graph& g, const std::map<std::string, FloatTensor>& feeds) {
  auto out = EvaluateFloat(g, feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<FloatTensor>{};
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << i;
}

int CountKind(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

// Exports, checks with ONNX's checker, re-imports.
OnnxModel RoundTrip(const OnnxModel& model, onnx::ModelProto* exported_proto = nullptr) {
  auto bytes = ExportOnnx(model, model.graph);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok()) return {};
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(*bytes));
  EXPECT_NO_THROW(onnx::checker::check_model(proto));
  if (exported_proto) *exported_proto = proto;
  auto again = ImportOnnx(*bytes);
  EXPECT_TRUE(again.ok()) << again.status();
  return again.ok() ? *std::move(again) : OnnxModel{};
}

// Conv 2->3 channels, 3x3, pads 1, bias, then Relu, on a 1x2x4x4 input.
ModelSpec ConvBiasRelu() {
  ModelSpec s;
  s.inputs = {Value("x", {"N", 2, 4, 4})};
  s.outputs = {Value("y", {"N", 3, 4, 4})};
  s.initializers = {FloatInit("w", {3, 2, 3, 3}, Iota(54)), FloatInit("b", {3}, {0.5f, -0.25f, 1.f})};
  s.nodes = {MakeNode("Conv", {"x", "w", "b"}, {"c"}, {MakeIntsAttribute("pads", {1, 1, 1, 1}), MakeIntsAttribute("kernel_shape", {3, 3})}),
             MakeNode("Relu", {"c"}, {"y"})};
  return s;
}

std::vector<float> ConvBiasReluReference(const std::vector<float>& x) {
  const std::vector<float> w = Iota(54), b = {0.5f, -0.25f, 1.f};
  std::vector<float> y(3 * 16);
  for (int oc = 0; oc < 3; ++oc) {
    for (int oy = 0; oy < 4; ++oy) {
      for (int ox = 0; ox < 4; ++ox) {
        float acc = b[oc];
        for (int ic = 0; ic < 2; ++ic) {
          for (int ky = 0; ky < 3; ++ky) {
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy + ky - 1, ix = ox + kx - 1;
              if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
              acc += x[(ic * 4 + iy) * 4 + ix] * w[((oc * 2 + ic) * 3 + ky) * 3 + kx];
            }
          }
        }
        y[(oc * 4 + oy) * 4 + ox] = std::max(acc, 0.f);
      }
    }
  }
  return y;
}

TEST(OnnxImportTest, ConvBiasReluMatchesHandComputation) {
  auto model = ImportOnnx(Build(ConvBiasRelu()));
  ASSERT_TRUE(model.ok()) << model.status();
  const Graph& g = model->graph;
  EXPECT_EQ(CountKind(g, OpKind::kConv2D), 1);
  EXPECT_EQ(CountKind(g, OpKind::kEwAdd), 1);  // the bias
  EXPECT_EQ(CountKind(g, OpKind::kRelu), 1);
  EXPECT_EQ(CountKind(g, OpKind::kOpaque), 0);
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kConv2D) {
      EXPECT_EQ(n.params.padding, Padding::kSame);  // pads 1 on 3x3, stride 1
    }
    if (n.kind == OpKind::kInput) {
      EXPECT_EQ(n.output_types[0].dims, (std::vector<int64_t>{1, 2, 4, 4}));  // N -> 1
    }
  }
  const std::vector<float> x = Iota(32, 0.05f, -0.7f);
  auto out = Eval(g, {{"x", Feed({1, 2, 4, 4}, x)}});
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(out[0].data, ConvBiasReluReference(x));

  onnx::ModelProto exported;
  OnnxModel again = RoundTrip(*model, &exported);
  ExpectNear(Eval(again.graph, {{"x", Feed({1, 2, 4, 4}, x)}})[0].data, ConvBiasReluReference(x));
  // Metadata, names and the symbolic batch dimension survive.
  EXPECT_EQ(exported.producer_name(), "onnx_test");
  EXPECT_EQ(exported.doc_string(), "a test model");
  ASSERT_EQ(exported.metadata_props_size(), 1);
  EXPECT_EQ(exported.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(exported.graph().output(0).name(), "y");
  // The bias goes back into Conv's third input: Conv then Relu, as imported.
  ASSERT_EQ(exported.graph().node_size(), 2);
  EXPECT_EQ(exported.graph().node(0).op_type(), "Conv");
  EXPECT_EQ(exported.graph().node(0).input_size(), 3);
  EXPECT_EQ(exported.graph().node(1).op_type(), "Relu");
}

TEST(OnnxImportTest, DefaultDimIsConfigurable) {
  OnnxImportOptions options;
  options.default_dim = 2;
  auto model = ImportOnnx(Build(ConvBiasRelu()), options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph.node(0).output_types[0].dims, (std::vector<int64_t>{2, 2, 4, 4}));
}

TEST(OnnxImportTest, GemmWithTransposeAlphaBeta) {
  ModelSpec s;
  s.inputs = {Value("a", {2, 3})};
  s.outputs = {Value("y", {2, 4})};
  const std::vector<float> b = Iota(12), c = {1.f, 2.f, 3.f, 4.f};
  s.initializers = {FloatInit("b", {4, 3}, b), FloatInit("c", {4}, c)};
  s.nodes = {MakeNode("Gemm", {"a", "b", "c"}, {"y"}, {MakeIntAttribute("transB", 1), MakeFloatAttribute("alpha", 0.5f), MakeFloatAttribute("beta", 2.f)})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kTranspose), 1);
  EXPECT_EQ(CountKind(model->graph, OpKind::kMatMul), 1);
  EXPECT_EQ(CountKind(model->graph, OpKind::kScalarMul), 2);
  const std::vector<float> a = Iota(6, 0.3f, -0.5f);
  std::vector<float> want(8);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      float acc = 0;
      for (int k = 0; k < 3; ++k) acc += a[i * 3 + k] * b[j * 3 + k];
      want[i * 4 + j] = 0.5f * acc + 2.f * c[j];
    }
  }
  ExpectNear(Eval(model->graph, {{"a", Feed({2, 3}, a)}})[0].data, want);
  OnnxModel again = RoundTrip(*model);
  ExpectNear(Eval(again.graph, {{"a", Feed({2, 3}, a)}})[0].data, want);
}

TEST(OnnxImportTest, NodesInAnyOrderLoad) {
  ModelSpec s = ConvBiasRelu();
  std::swap(s.nodes[0], s.nodes[1]);  // Relu listed before the Conv it reads
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<float> x = Iota(32, 0.05f, -0.7f);
  ExpectNear(Eval(model->graph, {{"x", Feed({1, 2, 4, 4}, x)}})[0].data, ConvBiasReluReference(x));
}

TEST(OnnxImportTest, UnsupportedOperatorStaysOpaqueAndRoundTrips) {
  ModelSpec s;
  s.inputs = {Value("x", {1, 4, 3, 3})};
  s.outputs = {Value("y", {1, 4, 3, 3})};
  s.nodes = {MakeNode("Relu", {"x"}, {"r"}),
             MakeNode("LRN", {"r"}, {"l"}, {MakeFloatAttribute("alpha", 2e-4f), MakeFloatAttribute("beta", 0.75f), MakeIntAttribute("size", 3)},
                      "my_lrn"),
             MakeNode("Sigmoid", {"l"}, {"y"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  // The nodes around the LRN are still IR operators: nothing is dropped.
  EXPECT_EQ(CountKind(model->graph, OpKind::kRelu), 1);
  EXPECT_EQ(CountKind(model->graph, OpKind::kSigmoid), 1);
  ASSERT_EQ(CountKind(model->graph, OpKind::kOpaque), 1);
  EXPECT_EQ(model->opaque_ops_seen, std::vector<std::string>{"ai.onnx::LRN"});
  const Node* lrn = nullptr;
  for (const Node& n : model->graph.nodes()) {
    if (n.kind == OpKind::kOpaque) lrn = &n;
  }
  EXPECT_EQ(lrn->name, "my_lrn");
  EXPECT_EQ(lrn->params.opaque.op_type, "LRN");
  EXPECT_EQ(lrn->params.opaque.attributes.size(), 3u);
  EXPECT_EQ(lrn->output_types[0].dims, (std::vector<int64_t>{1, 4, 3, 3}));

  onnx::ModelProto exported;
  OnnxModel again = RoundTrip(*model, &exported);
  const onnx::NodeProto* out_lrn = nullptr;
  for (const auto& n : exported.graph().node()) {
    if (n.op_type() == "LRN") out_lrn = &n;
  }
  ASSERT_NE(out_lrn, nullptr);
  EXPECT_EQ(out_lrn->name(), "my_lrn");
  ASSERT_EQ(out_lrn->attribute_size(), 3);
  EXPECT_FLOAT_EQ(out_lrn->attribute(0).f(), 2e-4f);
  EXPECT_EQ(out_lrn->attribute(2).i(), 3);
  EXPECT_EQ(CountKind(again.graph, OpKind::kOpaque), 1);
}

TEST(OnnxImportTest, OpaqueNodeKeepsOmittedInputsAndSeveralOutputs) {
  // A custom-domain operator: unknown to shape inference, so its outputs have
  // unknown shapes and the Relu reading one stays opaque too.
  ModelSpec s;
  s.extra_opsets = {{"com.example", 1}};
  s.inputs = {Value("x", {2, 3}), Value("z", {2, 3})};
  s.outputs = {Value("a", {2, 3}), Value("y", {2, 3})};
  onnx::NodeProto custom = MakeNode("Foo", {"x", "", "z"}, {"a", "", "b"}, {MakeIntAttribute("mode", 7)}, "foo");
  custom.set_domain("com.example");
  s.nodes = {custom, MakeNode("Relu", {"b"}, {"y"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kOpaque), 2);
  onnx::ModelProto exported;
  OnnxModel again = RoundTrip(*model, &exported);
  const onnx::NodeProto* foo = nullptr;
  for (const auto& n : exported.graph().node()) {
    if (n.op_type() == "Foo") foo = &n;
  }
  ASSERT_NE(foo, nullptr);
  EXPECT_EQ(foo->domain(), "com.example");
  ASSERT_EQ(foo->input_size(), 3);
  EXPECT_EQ(foo->input(0), "x");
  EXPECT_EQ(foo->input(1), "");
  EXPECT_EQ(foo->input(2), "z");
  ASSERT_EQ(foo->output_size(), 3);
  EXPECT_EQ(foo->output(1), "");
  EXPECT_EQ(foo->attribute(0).i(), 7);
  EXPECT_EQ(CountKind(again.graph, OpKind::kOpaque), 2);
}

TEST(OnnxImportTest, OpaqueNodeRecordsItsOpsetAndGapsEvenWithoutItsKeptNode) {
  ModelSpec s;
  s.opset = 15;
  s.extra_opsets = {{"com.example", 3}};
  s.inputs = {Value("x", {2, 3}), Value("z", {2, 3})};
  s.outputs = {Value("a", {2, 3})};
  onnx::NodeProto custom = MakeNode("Foo", {"x", "", "z"}, {"a", "", "b"}, {}, "foo");
  custom.set_domain("com.example");
  s.nodes = {custom};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* foo = nullptr;
  for (const Node& n : model->graph.nodes()) {
    if (n.kind == OpKind::kOpaque) foo = &n;
  }
  ASSERT_NE(foo, nullptr);
  EXPECT_EQ(foo->params.opaque.opset, 3);
  EXPECT_EQ(foo->params.opaque.input_slots, (std::vector<int>{0, OpaqueInfo::kOmitted, 1}));
  EXPECT_EQ(foo->params.opaque.output_slots, (std::vector<int>{0, OpaqueInfo::kOmitted, 1}));
  // A search that rebuilds the node (eqsat's extraction) loses its name and
  // so its kept ONNX node; the slots still put the gaps back.
  std::vector<Node> nodes = model->graph.nodes();
  nodes[foo->id].name = "rebuilt";
  auto rebuilt = Graph::Create(std::move(nodes), model->graph.outputs());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  auto bytes = ExportOnnx(*model, *rebuilt);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  onnx::ModelProto exported;
  ASSERT_TRUE(exported.ParseFromString(*bytes));
  const onnx::NodeProto& out = exported.graph().node(0);
  ASSERT_EQ(out.input_size(), 3);
  EXPECT_EQ(out.input(1), "");
  EXPECT_EQ(out.input(2), "z");
  ASSERT_EQ(out.output_size(), 3);
  EXPECT_EQ(out.output(1), "");
}

TEST(OnnxImportTest, IdentityAndDropoutAreRemoved) {
  ModelSpec s;
  s.inputs = {Value("x", {2, 3})};
  s.outputs = {Value("y", {2, 3}), Value("same", {2, 3})};
  s.nodes = {MakeNode("Identity", {"x"}, {"i"}), MakeNode("Dropout", {"i"}, {"d"}), MakeNode("Relu", {"d"}, {"y"}),
             MakeNode("Identity", {"x"}, {"same"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->graph.num_ops(), 1);  // the Relu
  // An output that is the input itself comes back through an Identity.
  OnnxModel again = RoundTrip(*model);
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  auto out = Eval(again.graph, {{"x", Feed({2, 3}, x)}});
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0].data, {0, 2, 0, 4, 0, 6});
  ExpectNear(out[1].data, x);
}

TEST(OnnxImportTest, BatchNormalizationIsImportedNotFolded) {
  ModelSpec s;
  s.inputs = {Value("x", {1, 2, 2, 2})};
  s.outputs = {Value("y", {1, 2, 2, 2})};
  s.initializers = {FloatInit("scale", {2}, {2.f, 0.5f}), FloatInit("bias", {2}, {1.f, -1.f}),
                    FloatInit("mean", {2}, {0.5f, 1.f}), FloatInit("var", {2}, {4.f, 0.25f})};
  s.nodes = {MakeNode("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, {MakeFloatAttribute("epsilon", 0.f)})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kBatchNorm), 1);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> want(8);
  for (int i = 0; i < 8; ++i) {
    want[i] = i < 4 ? 2.f * (x[i] - 0.5f) / 2.f + 1.f : 0.5f * (x[i] - 1.f) / 0.5f - 1.f;
  }
  ExpectNear(Eval(model->graph, {{"x", Feed({1, 2, 2, 2}, x)}})[0].data, want);
  OnnxModel again = RoundTrip(*model);
  ExpectNear(Eval(again.graph, {{"x", Feed({1, 2, 2, 2}, x)}})[0].data, want);
}

TEST(OnnxImportTest, ReshapeResolvesZeroAndMinusOne) {
  ModelSpec s;
  s.inputs = {Value("x", {2, 3, 4})};
  s.outputs = {Value("y", {2, 12})};
  s.initializers = {IntInit("shape", {0, -1})};
  s.nodes = {MakeNode("Reshape", {"x", "shape"}, {"y"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(CountKind(model->graph, OpKind::kReshape), 1);
  for (const Node& n : model->graph.nodes()) {
    if (n.kind == OpKind::kReshape) {
      EXPECT_EQ(n.params.shape, (std::vector<int64_t>{2, 12}));
    }
  }
  EXPECT_EQ(CountKind(model->graph, OpKind::kWeight), 0);  // the shape is read, not a node
  const std::vector<float> x = Iota(24);
  OnnxModel again = RoundTrip(*model);
  ExpectNear(Eval(again.graph, {{"x", Feed({2, 3, 4}, x)}})[0].data, x);
}

TEST(OnnxImportTest, SplitBySizesFromInputAndAttribute) {
  for (int opset : {11, 13}) {
    ModelSpec s;
    s.opset = opset;
    s.inputs = {Value("x", {2, 3})};
    s.outputs = {Value("p", {2, 1}), Value("q", {2, 2})};
    onnx::NodeProto split = MakeNode("Split", {"x"}, {"p", "q"}, {MakeIntAttribute("axis", -1)});
    if (opset >= 13) {
      split.add_input("sizes");
      s.initializers = {IntInit("sizes", {1, 2})};
    } else {
      *split.add_attribute() = MakeIntsAttribute("split", {1, 2});
    }
    s.nodes = {split};
    auto model = ImportOnnx(Build(s));
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(CountKind(model->graph, OpKind::kSplit), 1) << "opset " << opset;
    const std::vector<float> x = {1, 2, 3, 4, 5, 6};
    OnnxModel again = RoundTrip(*model);
    auto out = Eval(again.graph, {{"x", Feed({2, 3}, x)}});
    ASSERT_EQ(out.size(), 2u);
    ExpectNear(out[0].data, {1, 4});
    ExpectNear(out[1].data, {2, 3, 5, 6});
  }
}

TEST(OnnxImportTest, SubgraphReadingOuterValuesRoundTrips) {
  // An If whose branches read "r" (a Relu output) from the enclosing graph:
  // export must still define "r" under that name.
  auto branch = [](const std::string& op) {
    onnx::GraphProto g;
    g.set_name(op + "_branch");
    *g.add_node() = MakeNode(op, {"r"}, {op + "_out"});
    *g.add_output() = Value(op + "_out", {2});
    return g;
  };
  onnx::AttributeProto then_attr, else_attr;
  then_attr.set_name("then_branch");
  then_attr.set_type(onnx::AttributeProto::GRAPH);
  *then_attr.mutable_g() = branch("Sigmoid");
  else_attr.set_name("else_branch");
  else_attr.set_type(onnx::AttributeProto::GRAPH);
  *else_attr.mutable_g() = branch("Tanh");
  ModelSpec s;
  s.inputs = {Value("x", {2}), Value("cond", {}, onnx::TensorProto::BOOL)};
  s.outputs = {Value("y", {2})};
  s.nodes = {MakeNode("If", {"cond"}, {"y"}, {then_attr, else_attr}, "choose"), MakeNode("Relu", {"x"}, {"r"})};
  auto model = ImportOnnx(Build(s));  // also sorted: the If reads r implicitly
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kRelu), 1);
  ASSERT_EQ(model->opaque_nodes.count("choose"), 1u);
  EXPECT_EQ(model->opaque_nodes.at("choose").outer_scope_inputs, std::vector<std::string>{"r"});
  onnx::ModelProto exported;
  OnnxModel again = RoundTrip(*model, &exported);
  EXPECT_EQ(CountKind(again.graph, OpKind::kOpaque), 1);
}

TEST(OnnxImportTest, SmallResidualNetworkRoundTrips) {
  // conv-bn-relu, maxpool, a residual conv block, global pooling, flatten, gemm.
  ModelSpec s;
  s.inputs = {Value("image", {"batch", 3, 8, 8})};
  s.outputs = {Value("logits", {"batch", 5})};
  s.initializers = {FloatInit("w1", {4, 3, 3, 3}, Iota(108, 0.05f, -0.5f)), FloatInit("b1", {4}, {0.1f, 0.2f, -0.1f, 0.f}),
                    FloatInit("g", {4}, {1.f, 0.5f, 2.f, 1.5f}), FloatInit("be", {4}, {0.f, 0.1f, 0.2f, -0.3f}),
                    FloatInit("mu", {4}, {0.1f, 0.f, -0.2f, 0.3f}), FloatInit("var", {4}, {1.f, 2.f, 0.5f, 1.f}),
                    FloatInit("w2", {4, 4, 3, 3}, Iota(144, 0.03f, -0.3f)), FloatInit("fc", {5, 4}, Iota(20, 0.1f, -1.f)),
                    FloatInit("fc_b", {5}, {0.f, 1.f, 2.f, 3.f, 4.f})};
  s.nodes = {MakeNode("Conv", {"image", "w1", "b1"}, {"c1"}, {MakeIntsAttribute("pads", {1, 1, 1, 1})}),
             MakeNode("BatchNormalization", {"c1", "g", "be", "mu", "var"}, {"n1"}),
             MakeNode("Relu", {"n1"}, {"r1"}),
             MakeNode("MaxPool", {"r1"}, {"p1"}, {MakeIntsAttribute("kernel_shape", {2, 2}), MakeIntsAttribute("strides", {2, 2})}),
             MakeNode("Conv", {"p1", "w2"}, {"c2"}),
             MakeNode("Add", {"c2", "p1"}, {"s"}),
             MakeNode("Relu", {"s"}, {"r2"}),
             MakeNode("GlobalAveragePool", {"r2"}, {"gap"}),
             MakeNode("Flatten", {"gap"}, {"flat"}),
             MakeNode("Gemm", {"flat", "fc", "fc_b"}, {"logits"}, {MakeIntAttribute("transB", 1)})};
  onnx::AttributeProto same;
  same.set_name("auto_pad");
  same.set_type(onnx::AttributeProto::STRING);
  same.set_s("SAME_UPPER");
  *s.nodes[4].add_attribute() = same;
  OnnxImportOptions options;
  options.default_dim = 2;
  auto model = ImportOnnx(Build(s), options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kOpaque), 0);
  EXPECT_EQ(CountKind(model->graph, OpKind::kBatchNorm), 1);
  EXPECT_EQ(CountKind(model->graph, OpKind::kConv2D), 2);
  const std::map<std::string, FloatTensor> feeds = {{"image", Feed({2, 3, 8, 8}, Iota(384, 0.1f, -1.f))}};
  const std::vector<FloatTensor> want = Eval(model->graph, feeds);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(want[0].type.dims, (std::vector<int64_t>{2, 5}));
  onnx::ModelProto exported;
  RoundTrip(*model, &exported);
  auto again = ImportOnnx(exported.SerializeAsString(), options);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectNear(Eval(again->graph, feeds)[0].data, want[0].data);
  // Still usable at another batch size: the flatten keeps the batch dimension symbolic.
  options.default_dim = 3;
  auto batch3 = ImportOnnx(exported.SerializeAsString(), options);
  ASSERT_TRUE(batch3.ok()) << batch3.status();
  EXPECT_EQ(Eval(batch3->graph, {{"image", Feed({3, 3, 8, 8}, Iota(576))}})[0].type.dims,
            (std::vector<int64_t>{3, 5}));
}

TEST(OnnxImportTest, EdgeCasesOfSupportedOperators) {
  ModelSpec s;
  s.inputs = {Value("v", {3}), Value("i", {2}, onnx::TensorProto::INT64), Value("x", {2, 2})};
  s.outputs = {Value("mv", {4}), Value("isum", {2}, onnx::TensorProto::INT64), Value("d", {2, 2}),
               Value("mask", {2, 2}, onnx::TensorProto::BOOL)};
  s.initializers = {FloatInit("m", {3, 4}, Iota(12))};
  s.nodes = {MakeNode("MatMul", {"v", "m"}, {"mv"}),      // 1-D operand: reshaped around a matmul
             MakeNode("Add", {"i", "i"}, {"isum"}),       // int64: opaque
             MakeNode("Dropout", {"x"}, {"d", "mask"})};  // mask read: opaque
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(CountKind(model->graph, OpKind::kMatMul), 1);
  EXPECT_EQ(model->opaque_ops_seen, (std::vector<std::string>{"ai.onnx::Add", "ai.onnx::Dropout"}));
  OnnxModel again = RoundTrip(*model);
  EXPECT_EQ(CountKind(again.graph, OpKind::kOpaque), 2);
}

TEST(OnnxExportTest, FusedActivationAndSamePaddingAreWrittenOut) {
  // What the optimizer produces: a conv2d with relu fused and SAME padding.
  ModelSpec s;
  s.inputs = {Value("x", {1, 1, 5, 5})};
  s.outputs = {Value("y", {1, 1, 3, 3})};
  s.initializers = {FloatInit("w", {1, 1, 2, 2}, {1.f, -1.f, 0.5f, 2.f})};
  s.nodes = {MakeNode("Conv", {"x", "w"}, {"c"}, {MakeIntsAttribute("strides", {2, 2}), MakeIntsAttribute("pads", {0, 0, 1, 1})}),
             MakeNode("Relu", {"c"}, {"y"})};
  auto model = ImportOnnx(Build(s));
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<float> x = Iota(25, 0.2f, -2.f);
  const std::vector<float> want = Eval(model->graph, {{"x", Feed({1, 1, 5, 5}, x)}})[0].data;

  Graph fused;
  const TensorRef in = fused.AddInput("x", TensorType::RowMajor(DType::kFloat32, {1, 1, 5, 5}));
  const Node& w_node = model->graph.node(1);
  ASSERT_EQ(w_node.kind, OpKind::kWeight);
  const TensorRef w = fused.AddWeight("w", w_node.output_types[0], w_node.data);
  OpParams p;
  p.stride_h = p.stride_w = 2;
  p.padding = Padding::kSame;
  p.activation = Activation::kRelu;
  auto conv = fused.AddOp1(OpKind::kConv2D, p, {in, w});
  ASSERT_TRUE(conv.ok()) << conv.status();
  fused.AddOutput("y", *conv);

  auto bytes = ExportOnnx(*model, fused);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  ASSERT_EQ(proto.graph().node_size(), 2);
  EXPECT_EQ(proto.graph().node(0).op_type(), "Conv");
  EXPECT_EQ(proto.graph().node(1).op_type(), "Relu");
  for (const auto& a : proto.graph().node(0).attribute()) {
    EXPECT_NE(a.name(), "auto_pad");
    if (a.name() == "pads") {
      EXPECT_EQ(std::vector<int64_t>(a.ints().begin(), a.ints().end()), (std::vector<int64_t>{0, 0, 1, 1}));
    }
  }
  auto again = ImportOnnx(*bytes);
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectNear(Eval(again->graph, {{"x", Feed({1, 1, 5, 5}, x)}})[0].data, want);
}

TEST(OnnxExportTest, RejectsGraphWithOtherOutputs) {
  auto model = ImportOnnx(Build(ConvBiasRelu()));
  ASSERT_TRUE(model.ok()) << model.status();
  Graph g;
  g.AddOutput("not_y", g.AddInput("x", TensorType::RowMajor(DType::kFloat32, {1, 2, 4, 4})));
  auto bytes = ExportOnnx(*model, g);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bytes.status().message()), HasSubstr("not_y"));
}

// --- Malformed models: statuses with messages, never crashes ---

absl::Status ImportStatus(const std::string& bytes, const OnnxImportOptions& options = {}) {
  return ImportOnnx(bytes, options).status();
}

TEST(OnnxImportErrorTest, TruncatedBytes) {
  const std::string bytes = Build(ConvBiasRelu());
  const absl::Status s = ImportStatus(bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("truncated"));
}

TEST(OnnxImportErrorTest, OverTheSizeLimit) {
  OnnxImportOptions options;
  options.max_model_bytes = 100;
  const absl::Status s = ImportStatus(Build(ConvBiasRelu()), options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("max_model_bytes"));
}

TEST(OnnxImportErrorTest, Cycle) {
  ModelSpec s;
  s.inputs = {Value("x", {2})};
  s.outputs = {Value("y", {2})};
  s.nodes = {MakeNode("Add", {"x", "b"}, {"a"}, {}, "first"), MakeNode("Relu", {"a"}, {"b"}, {}, "second"),
             MakeNode("Relu", {"a"}, {"y"})};
  const absl::Status s2 = ImportStatus(Build(s));
  EXPECT_EQ(s2.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s2.message()), HasSubstr("cycle"));
  EXPECT_THAT(std::string(s2.message()), HasSubstr("'first'"));
  EXPECT_THAT(std::string(s2.message()), HasSubstr("'b'"));
}

TEST(OnnxImportErrorTest, DanglingInput) {
  ModelSpec s;
  s.inputs = {Value("x", {2})};
  s.outputs = {Value("y", {2})};
  s.nodes = {MakeNode("Add", {"x", "ghost"}, {"y"}, {}, "adder")};
  const absl::Status st = ImportStatus(Build(s));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("'adder'"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("'ghost'"));
}

TEST(OnnxImportErrorTest, WrongDeclaredShapes) {
  ModelSpec s;
  s.inputs = {Value("a", {2, 3}), Value("b", {4, 5})};
  s.outputs = {Value("y", {2, 3})};
  s.nodes = {MakeNode("Add", {"a", "b"}, {"y"})};
  absl::Status st = ImportStatus(Build(s));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("shape inference"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("Add"));

  ModelSpec t;  // a declared output shape that contradicts the operator
  t.inputs = {Value("x", {2, 3})};
  t.outputs = {Value("y", {4, 5})};
  t.nodes = {MakeNode("Relu", {"x"}, {"y"})};
  st = ImportStatus(Build(t));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("shape inference"));
}

TEST(OnnxImportErrorTest, CheckerFailure) {
  ModelSpec s;
  s.inputs = {Value("x", {2})};
  s.outputs = {Value("y", {2})};
  s.nodes = {MakeNode("NoSuchOperator", {"x"}, {"y"})};
  const absl::Status st = ImportStatus(Build(s));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("checker"));
  EXPECT_THAT(std::string(st.message()), HasSubstr("NoSuchOperator"));
}

TEST(OnnxImportErrorTest, CorruptedBytesNeverCrash) {
  const std::string good = Build(ConvBiasRelu());
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = good;
    const int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= static_cast<char>(1 << (rng() % 8));
    auto model = ImportOnnx(bytes);
    if (!model.ok()) {
      EXPECT_NE(model.status().code(), absl::StatusCode::kInternal) << model.status();
      EXPECT_FALSE(model.status().message().empty());
      continue;
    }
    // Whatever imports must export to a valid model.
    auto out = ExportOnnx(*model, model->graph);
    EXPECT_TRUE(out.ok()) << "trial " << trial << ": " << out.status();
  }
}

// A fused gemm is written as standard ONNX: Gemm (its broadcast bias) and
// the activation after it, computing what the IR operator computes.
TEST(OnnxExportTest, FusedGemmIsWrittenAsGemmAndItsActivation) {
  Graph g;
  TensorRef x = g.AddInput("x", TensorType::RowMajor(DType::kFloat32, {2, 3}));
  auto values = [](const std::vector<float>& v) {
    return std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  };
  TensorRef w = g.AddWeight("w", TensorType::RowMajor(DType::kFloat32, {3, 4}), values(Iota(12, 0.1f, -0.6f)));
  TensorRef b = g.AddWeight("b", TensorType::RowMajor(DType::kFloat32, {4}), values({0.5f, -1.f, 0.25f, 2.f}));
  OpParams tanh;
  tanh.activation = Activation::kTanh;
  auto y = g.AddOp1(OpKind::kFusedGemm, tanh, {x, w, b});
  ASSERT_TRUE(y.ok()) << y.status();
  g.AddOutput("y", *y);
  auto bytes = ExportStandaloneOnnx(g);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  ASSERT_EQ(proto.graph().node_size(), 2);
  EXPECT_EQ(proto.graph().node(0).op_type(), "Gemm");
  EXPECT_EQ(proto.graph().node(0).input_size(), 3);
  EXPECT_EQ(proto.graph().node(1).op_type(), "Tanh");
  auto back = ImportOnnx(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  const std::map<std::string, FloatTensor> feeds = {{"x", Feed({2, 3}, Iota(6, 0.3f, -1.f))}};
  ExpectNear(Eval(back->graph, feeds)[0].data, Eval(g, feeds)[0].data);
  // For ONNX Runtime: its FusedGemm, the activation its own, the domain imported.
  auto ort = ExportStandaloneOnnx(g, 13, OnnxDialect::kOnnxRuntime);
  ASSERT_TRUE(ort.ok()) << ort.status();
  onnx::ModelProto fused;
  ASSERT_TRUE(fused.ParseFromString(*ort));
  ASSERT_EQ(fused.graph().node_size(), 1);
  EXPECT_EQ(fused.graph().node(0).op_type(), "FusedGemm");
  EXPECT_EQ(fused.graph().node(0).domain(), "com.microsoft");
  ASSERT_EQ(fused.graph().node(0).attribute_size(), 1);
  EXPECT_EQ(fused.graph().node(0).attribute(0).s(), "Tanh");
  EXPECT_TRUE(std::any_of(fused.opset_import().begin(), fused.opset_import().end(),
                          [](const onnx::OperatorSetIdProto& o) { return o.domain() == "com.microsoft"; }));
  // Before opset 7 Gemm's bias does not broadcast: refused, saying so.
  auto old = ExportStandaloneOnnx(g, 6);
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(std::string(old.status().message()), HasSubstr("opset 7"));
}

TEST(OnnxExportTest, StandaloneGraphRoundTripsWithItsNamesAndValues) {
  Graph g;
  TensorRef x = g.AddInput("x", TensorType::RowMajor(DType::kFloat32, {2, 3}));
  const std::vector<float> w_values = Iota(12);
  auto w_bytes = std::make_shared<const std::string>(reinterpret_cast<const char*>(w_values.data()),
                                                     w_values.size() * sizeof(float));
  TensorRef w = g.AddWeight("w", TensorType::RowMajor(DType::kFloat32, {3, 4}), w_bytes);
  OpParams relu;
  relu.activation = Activation::kRelu;
  auto y = g.AddOp1(OpKind::kMatMul, relu, {x, w});
  ASSERT_TRUE(y.ok()) << y.status();
  g.AddOutput("y", *y);
  auto bytes = ExportStandaloneOnnx(g);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto back = ImportOnnx(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  const std::map<std::string, FloatTensor> feeds = {{"x", Feed({2, 3}, Iota(6, 0.3f))}};
  const std::vector<FloatTensor> want = Eval(g, feeds), got = Eval(back->graph, feeds);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, want[0].data);

  Graph no_data;
  TensorRef a = no_data.AddInput("a", TensorType::RowMajor(DType::kFloat32, {2, 3}));
  TensorRef b = no_data.AddWeight("b", TensorType::RowMajor(DType::kFloat32, {3, 4}));
  no_data.AddOutput("c", *no_data.AddOp1(OpKind::kMatMul, OpParams{}, {a, b}));
  auto refused = ExportStandaloneOnnx(no_data);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("no data"));
}

}  // namespace
}  // namespace taso
