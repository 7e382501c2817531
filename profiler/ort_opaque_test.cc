// Opaque operators (ONNX operators the IR does not model): their signatures'
// constant operands and keys, the one-node models the ort backend times them
// as, real measurements in ONNX Runtime, and the cpu backend handing them to
// it. Cases that need ONNX Runtime skip, saying what is missing, where node
// or profiler/ort/node_modules is not there (deploy/setup.sh installs both).
#include <cstring>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "profiler/ort/opaque_operands.h"
#include "profiler/ort/ort_backend.h"
#include "profiler/ort/ort_model.h"
#include "profiler/ort/ort_opaque_model.h"
#include "profiler/profiler.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::F32;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TensorType I64(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kInt64, std::move(dims)); }
TensorType F16(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kFloat16, std::move(dims)); }
TensorType Bool(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kBool, std::move(dims)); }

std::string Int64s(const std::vector<int64_t>& v) {
  std::string bytes(v.size() * sizeof(int64_t), '\0');
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

std::string FloatBytes(float f) {
  std::string bytes(sizeof(float), '\0');
  std::memcpy(bytes.data(), &f, sizeof(float));
  return bytes;
}

std::pair<std::string, std::string> IntAttr(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return {name, a.SerializeAsString()};
}

std::pair<std::string, std::string> IntsAttr(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return {name, a.SerializeAsString()};
}

// An opaque operator of the default domain at opset 17 (PyTorch's export).
OpParams Opaque(const std::string& op_type, std::vector<TensorType> outputs,
                std::vector<std::pair<std::string, std::string>> attributes = {}) {
  OpParams p;
  p.opaque.op_type = op_type;
  p.opaque.output_types = std::move(outputs);
  p.opaque.attributes = std::move(attributes);
  p.opaque.opset = 17;
  return p;
}

OpParams At(OpParams p, int64_t opset, const std::string& domain) {
  p.opaque.opset = opset;
  p.opaque.domain = domain;
  return p;
}

absl::StatusOr<CanonicalSignature> Sig(const OpParams& params, std::vector<TensorType> inputs,
                                       std::map<int, std::string> constants = {}) {
  return Canonicalize(Signature{OpKind::kOpaque, params, std::move(inputs), std::move(constants)});
}

// The unrolled GRU cell's operators (PyTorch GRUCell, exported at opset 17)
// and the GRU operator (torch.nn.GRU): hidden 32, input 16, 4 steps.
CanonicalSignature Sub() { return *Sig(Opaque("Sub", {F32({1, 32})}), {F32({1, 32}), F32({1, 32})}); }
CanonicalSignature Gather() {
  return *Sig(Opaque("Gather", {F32({1, 16})}, {IntAttr("axis", 1)}), {F32({1, 4, 16}), I64({})}, {{1, Int64s({2})}});
}
CanonicalSignature Unsqueeze() {
  return *Sig(Opaque("Unsqueeze", {F32({1, 1, 32})}), {F32({1, 32}), I64({1})}, {{1, Int64s({1})}});
}
// Its shape computed at run time (no value): taken from the output.
CanonicalSignature Expand() { return *Sig(Opaque("Expand", {F32({1, 4, 32})}), {F32({1, 1, 32}), I64({3})}); }
// X, W, R, B, (sequence_lens omitted), initial_h -> Y, Y_h.
CanonicalSignature Gru() {
  OpParams p = Opaque("GRU", {F32({4, 1, 1, 32}), F32({1, 1, 32})},
                      {IntAttr("hidden_size", 32), IntAttr("linear_before_reset", 1)});
  p.opaque.input_slots = {0, 1, 2, 3, OpaqueInfo::kOmitted, 4};
  return *Sig(p, {F32({4, 1, 16}), F32({1, 96, 16}), F32({1, 96, 32}), F32({1, 192}), F32({1, 1, 32})},
              {{1, ""}, {2, ""}, {3, ""}});
}

TEST(OpaqueSignatureTest, ConstantOperandsAreInTheKeyWithTheirValuesWhenSmall) {
  EXPECT_EQ(Unsqueeze().key, "opaque[type=::Unsqueeze,out=f32[1,1,32],opset=17](f32[1,32],i64[1]=[1])");
  EXPECT_EQ(Gather().key, Gather().key);
  EXPECT_THAT(Gather().key, HasSubstr("(f32[1,4,16],i64[]=2)"));
  EXPECT_THAT(Gru().key, HasSubstr("in_slots=0:1:2:3:-1:4"));
  EXPECT_THAT(Gru().key, HasSubstr("f32[1,96,16]=const"));
  // Another axis, or the axes computed at run time, is another key.
  auto other = Sig(Opaque("Unsqueeze", {F32({1, 32, 1})}), {F32({1, 32}), I64({1})}, {{1, Int64s({2})}});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->key, Unsqueeze().key);
  auto computed = Sig(Opaque("Unsqueeze", {F32({1, 1, 32})}), {F32({1, 32}), I64({1})});
  ASSERT_TRUE(computed.ok()) << computed.status();
  EXPECT_THAT(computed->key, HasSubstr("(f32[1,32],i64[1])"));
  // A float scalar carries its value (Pow by 2 is its own kernel); a float
  // tensor is only marked.
  auto pow = Sig(Opaque("Pow", {F32({1, 8})}), {F32({1, 8}), F32({})}, {{1, FloatBytes(2.0f)}});
  ASSERT_TRUE(pow.ok()) << pow.status();
  EXPECT_THAT(pow->key, HasSubstr("f32[]=2)"));
  auto tensor = Sig(Opaque("Sub", {F32({1, 32})}), {F32({1, 32}), F32({1, 32})}, {{0, std::string(128, '\0')}});
  EXPECT_EQ(tensor.status().code(), absl::StatusCode::kInvalidArgument);
  auto short_value = Sig(Opaque("Unsqueeze", {F32({1, 1, 32})}), {F32({1, 32}), I64({1})}, {{1, "x"}});
  EXPECT_EQ(short_value.status().code(), absl::StatusCode::kInvalidArgument);
  auto out_of_range = Sig(Opaque("Sub", {F32({1, 32})}), {F32({1, 32}), F32({1, 32})}, {{2, ""}});
  EXPECT_EQ(out_of_range.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OpaqueSignatureTest, KeysOfOperatorsWithoutTheNewFieldsAreUnchanged) {
  // A cache written before constant operands, opsets and slots existed keeps
  // answering what it answered: IR keys never carry them...
  auto relu = Canonicalize(Signature{OpKind::kRelu, {}, {F32({1, 8})}, {{0, ""}}});
  ASSERT_TRUE(relu.ok()) << relu.status();
  EXPECT_EQ(relu->key, "relu(f32[1,8])");
  EXPECT_TRUE(relu->op.constant_inputs.empty());
  // ... and an opaque operator without them reads as it did.
  OpParams bare;
  bare.opaque.op_type = "Sub";
  bare.opaque.output_types = {F32({1, 32})};
  auto sub = Sig(bare, {F32({1, 32}), F32({1, 32})});
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(sub->key, "opaque[type=::Sub,out=f32[1,32]](f32[1,32],f32[1,32])");
}

TEST(OpaqueSignatureTest, ConstantOperandsSurviveTheWireForm) {
  auto back = SignatureFromProto(SignatureToProto(Gather().op));
  ASSERT_TRUE(back.ok()) << back.status();
  auto canonical = Canonicalize(*back);
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(canonical->key, Gather().key);
}

TEST(OpaqueSignatureTest, NodeSignatureMarksWeightsOfOpaqueOperatorsOnly) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 32}));
  TensorRef axes = g.AddWeight("axes", I64({1}), std::make_shared<const std::string>(Int64s({1})));
  OpParams p = Opaque("Unsqueeze", {F32({1, 1, 32})});
  auto out = g.AddOp1(OpKind::kOpaque, p, {x, axes});
  ASSERT_TRUE(out.ok()) << out.status();
  const Signature sig = NodeSignature(g, g.node(out->node));
  EXPECT_EQ(sig.constant_inputs.size(), 1u);
  EXPECT_EQ(sig.constant_inputs.at(1), Int64s({1}));
  auto canonical = Canonicalize(sig);
  ASSERT_TRUE(canonical.ok()) << canonical.status();
  EXPECT_EQ(canonical->key, Unsqueeze().key);
}

onnx::ModelProto Parse(const OneOperatorModel& m) {
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(m.onnx));
  return proto;
}

TEST(OpaqueModelTest, GruKeepsItsGapAndItsWeightsAsInitializers) {
  auto m = OpaqueTimingModel(Gru());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->graph_inputs, 2);
  EXPECT_EQ(m->graph_outputs, 2);
  const onnx::ModelProto proto = Parse(*m);
  EXPECT_EQ(proto.opset_import(0).version(), 17);
  ASSERT_EQ(proto.graph().node_size(), 1);
  const onnx::NodeProto& node = proto.graph().node(0);
  EXPECT_EQ(node.op_type(), "GRU");
  EXPECT_THAT(node.input(), ElementsAre("in0", "w1_0", "w2_0", "w3_0", "", "in4"));
  EXPECT_EQ(node.attribute_size(), 2);
  EXPECT_EQ(proto.graph().initializer_size(), 3);

  // Copies share the inputs and each have weights and outputs of their own.
  EXPECT_EQ(OrtCopies(Gru(), int64_t{8} << 20, 4), 4);
  auto copies = OpaqueTimingModel(Gru(), 3);
  ASSERT_TRUE(copies.ok()) << copies.status();
  EXPECT_EQ(copies->graph_inputs, 2);
  EXPECT_EQ(copies->graph_outputs, 6);
  EXPECT_EQ(Parse(*copies).graph().initializer_size(), 9);
  EXPECT_EQ(copies->operators, 3);

  // Spread over 7 nodes, node k reads copy k % 3's weights.
  auto spread = OpaqueTimingModel(Gru(), 3, 7);
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->operators, 7);
  EXPECT_EQ(spread->graph_inputs, 2);
  EXPECT_EQ(spread->graph_outputs, 14);
  const onnx::ModelProto spread_proto = Parse(*spread);
  EXPECT_EQ(spread_proto.graph().initializer_size(), 9);
  ASSERT_EQ(spread_proto.graph().node_size(), 7);
  for (int k = 0; k < 7; ++k) {
    EXPECT_THAT(spread_proto.graph().node(k).input(),
                ElementsAre("in0", absl::StrCat("w1_", k % 3), absl::StrCat("w2_", k % 3), absl::StrCat("w3_", k % 3),
                            "", "in4"));
  }
}

TEST(OpaqueModelTest, ShapeOperandsComeFromConstantsOrTheOutputShape) {
  auto unsqueeze = OpaqueTimingModel(Unsqueeze());
  ASSERT_TRUE(unsqueeze.ok()) << unsqueeze.status();
  onnx::ModelProto proto = Parse(*unsqueeze);
  ASSERT_EQ(proto.graph().initializer_size(), 1);
  EXPECT_EQ(proto.graph().initializer(0).raw_data(), Int64s({1}));
  EXPECT_EQ(unsqueeze->graph_inputs, 1);

  auto expand = OpaqueTimingModel(Expand());
  ASSERT_TRUE(expand.ok()) << expand.status();
  proto = Parse(*expand);
  ASSERT_EQ(proto.graph().initializer_size(), 1);
  EXPECT_EQ(proto.graph().initializer(0).raw_data(), Int64s({1, 4, 32}));
}

std::vector<int64_t> Int64Values(const std::string& bytes) {
  std::vector<int64_t> v(bytes.size() / sizeof(int64_t));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// PyTorch computes these with shape arithmetic ORT folds at load: here they
// have no value, and the output shape gives them one.
CanonicalSignature PadComputed() {
  return *Sig(Opaque("Pad", {F32({1, 16, 34, 34})}), {F32({1, 16, 32, 32}), I64({8})});
}
CanonicalSignature SliceComputed() {  // x[:, :16] with constant axes and steps
  return *Sig(Opaque("Slice", {F32({1, 16, 16, 16})}), {F32({1, 32, 16, 16}), I64({1}), I64({1}), I64({1}), I64({1})},
              {{3, Int64s({1})}, {4, Int64s({1})}});
}
CanonicalSignature ResizeByScales() {  // Resize(x, "", scales): scales a constant too large to carry
  OpParams p = Opaque("Resize", {F32({1, 16, 32, 32})});
  p.opaque.input_slots = {0, OpaqueInfo::kOmitted, 1};
  return *Sig(p, {F32({1, 16, 16, 16}), F32({4})}, {{1, ""}});
}

TEST(OpaqueModelTest, ComputedShapeOperandsComeFromTheOutputShape) {
  auto pad = DerivedOperands(PadComputed());
  ASSERT_EQ(pad.count(1), 1u);
  EXPECT_THAT(Int64Values(pad[1]), ElementsAre(0, 0, 0, 0, 0, 0, 2, 2));
  auto slice = DerivedOperands(SliceComputed());
  ASSERT_EQ(slice.size(), 2u) << "starts and ends; axes and steps are the model's";
  EXPECT_THAT(Int64Values(slice[1]), ElementsAre(0));
  EXPECT_THAT(Int64Values(slice[2]), ElementsAre(16));
  auto resize = DerivedOperands(ResizeByScales());
  ASSERT_EQ(resize.count(1), 1u);
  std::vector<float> scales(4);
  std::memcpy(scales.data(), resize[1].data(), 16);
  EXPECT_THAT(scales, ElementsAre(1, 1, 2, 2));
  // Opset 18's Resize scales the axes it lists.
  OpParams on_axes = ResizeByScales().op.params;
  on_axes.opaque.attributes = {IntsAttr("axes", {2, 3})};
  on_axes.opaque.opset = 18;
  auto two = DerivedOperands(*Sig(on_axes, {F32({1, 16, 16, 16}), F32({2})}, {{1, ""}}));
  ASSERT_EQ(two.count(1), 1u);
  EXPECT_EQ(two[1].size(), 8u);
  // A value the model gives is never replaced.
  EXPECT_TRUE(DerivedOperands(Unsqueeze()).empty());
}

TEST(OpaqueModelTest, WhatCannotRunAloneIsUnimplemented) {
  OpParams side = Opaque("Pad", {F32({1, 34})});
  side.opaque.input_slots = {0, OpaqueInfo::kSideConstant};
  auto pad = OpaqueTimingModel(*Sig(side, {F32({1, 32})}));
  EXPECT_EQ(pad.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(pad.status().message()), HasSubstr("constant the IR cannot hold"));

  onnx::AttributeProto branch;
  branch.set_name("then_branch");
  branch.set_type(onnx::AttributeProto::GRAPH);
  branch.mutable_g()->set_name("then");
  auto if_node = OpaqueTimingModel(
      *Sig(Opaque("If", {F32({1, 8})}, {{"then_branch", branch.SerializeAsString()}}), {Bool({})}));
  EXPECT_EQ(if_node.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(if_node.status().message()), HasSubstr("subgraph"));
}

// The real backend, or a skip naming what is missing.
class OrtOpaqueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = OrtBackend::Create(OrtBackendOptions{});
    if (!created.ok() && created.status().code() == absl::StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << "ONNX Runtime is not available here: " << created.status().message();
    }
    ASSERT_TRUE(created.ok()) << created.status();
    backend_ = std::move(*created);
  }

  static TimingOptions Quick() {
    TimingOptions t;
    t.warmup = 3;
    t.repetitions = 20;
    t.min_timed_ms = 5;
    return t;
  }

  std::unique_ptr<OrtBackend> backend_;
};

TEST_F(OrtOpaqueTest, TheGruCellsAndTheGruOperatorTakePositiveTimes) {
  for (const auto& [name, sig] : std::vector<std::pair<std::string, CanonicalSignature>>{
           {"Sub", Sub()}, {"Gather", Gather()}, {"Unsqueeze", Unsqueeze()}, {"Expand", Expand()}, {"GRU", Gru()}}) {
    auto m = backend_->Measure(sig, Quick());
    ASSERT_TRUE(m.ok()) << name << ": " << m.status();
    EXPECT_GT(m->median_ms, 0) << name;
    EXPECT_LT(m->median_ms, 50) << name;
    EXPECT_THAT(m->kernel, HasSubstr("ort ")) << name;
    std::cout << name << ": " << m->median_ms << " ms median (" << m->kernel << ")\n";
  }
}

// What PyTorch writes for LayerNorm, GELU and attention masks, typed as the
// model has them (int64 shapes, boolean masks, a scalar exponent), and
// operators of another opset, domain and element type.
TEST_F(OrtOpaqueTest, LayerNormAndAttentionOperatorsAreMeasured) {
  const TensorType x = F32({1, 16, 64});
  const TensorType mean = F32({1, 16, 1});
  std::vector<std::pair<std::string, absl::StatusOr<CanonicalSignature>>> cases = {
      {"ReduceMean", Sig(Opaque("ReduceMean", {mean}, {IntsAttr("axes", {-1})}), {x})},
      {"Pow", Sig(Opaque("Pow", {x}), {x, F32({})}, {{1, FloatBytes(2.0f)}})},
      {"Sqrt", Sig(Opaque("Sqrt", {mean}), {mean})},
      {"Div", Sig(Opaque("Div", {x}), {x, mean})},
      {"Erf", Sig(Opaque("Erf", {x}), {x})},
      {"Where", Sig(Opaque("Where", {x}), {Bool({1, 16, 64}), x, F32({})}, {{2, FloatBytes(-1e4f)}})},
      {"Cast", Sig(Opaque("Cast", {I64({1, 16, 64})}, {IntAttr("to", onnx::TensorProto::INT64)}), {x})},
      {"Slice", Sig(Opaque("Slice", {F32({1, 8, 64})}), {x, I64({1}), I64({1}), I64({1})},
                    {{1, Int64s({0})}, {2, Int64s({8})}, {3, Int64s({1})}})},
      {"Softmax", Sig(Opaque("Softmax", {x}, {IntAttr("axis", -1)}), {x})},
      {"LayerNormalization", Sig(Opaque("LayerNormalization", {x}, {IntAttr("axis", -1)}),
                                 {x, F32({64}), F32({64})}, {{1, ""}, {2, ""}})},
      {"Gather (int64 data)", Sig(Opaque("Gather", {I64({})}), {I64({3}), I64({})}, {{1, Int64s({0})}})},
      {"ReduceMean-18 (axes an input)", Sig(At(Opaque("ReduceMean", {mean}), 18, ""), {x, I64({1})},
                                            {{1, Int64s({-1})}})},
      {"com.microsoft::Gelu", Sig(At(Opaque("Gelu", {x}), 1, "com.microsoft"), {x})},
      {"Relu (float16)", Sig(Opaque("Relu", {F16({1, 16, 64})}), {F16({1, 16, 64})})},
      {"Pad (computed pads)", PadComputed()},
      {"Slice (computed bounds)", SliceComputed()},
      {"Resize (scales)", ResizeByScales()},
  };
  for (const auto& [name, sig] : cases) {
    ASSERT_TRUE(sig.ok()) << name << ": " << sig.status();
    auto m = backend_->Measure(*sig, Quick());
    ASSERT_TRUE(m.ok()) << name << ": " << m.status();
    EXPECT_GT(m->median_ms, 0) << name;
    std::cout << name << ": " << m->median_ms << " ms median (" << m->kernel << ")\n";
  }
}

TEST_F(OrtOpaqueTest, AnOperatorOrtRejectsFailsAloneWithItsReason) {
  // Unsqueeze by the same axis twice is invalid.
  auto bad = Sig(Opaque("Unsqueeze", {F32({1, 1, 1, 32})}), {F32({1, 32}), I64({2})}, {{1, Int64s({0, 0})}});
  ASSERT_TRUE(bad.ok()) << bad.status();
  auto m = backend_->Measure(*bad, Quick());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("ONNX Runtime cannot run it"));
}

ProfilerOptions CpuProfilerOptions() {
  ProfilerOptions options;
  options.enable_cuda = false;
  options.timing.warmup = 3;
  options.timing.repetitions = 20;
  options.timing.min_timed_ms = 5;
  return options;
}

MeasureRequest CpuRequest(const std::vector<CanonicalSignature>& sigs) {
  MeasureRequest request;
  request.set_backend(BACKEND_CPU);
  for (const CanonicalSignature& s : sigs) *request.add_signatures() = SignatureToProto(s.op);
  return request;
}

TEST(CpuGapsInOrtTest, TheCpuBackendHasOrtMeasureWhatItCannotAndSaysSo) {
  if (auto ort = OrtBackend::Create(OrtBackendOptions{}); !ort.ok()) {
    GTEST_SKIP() << "ONNX Runtime is not available here: " << ort.status().message();
  }
  auto profiler = CostProfiler::Create(CpuProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto response = (*profiler)->MeasureBatch(CpuRequest({Sub(), Gather()}));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->backend(), BACKEND_CPU) << "the backend that answered";
  EXPECT_THAT(response->device(), HasSubstr("cpu:"));
  ASSERT_EQ(response->results_size(), 2);
  for (const MeasureResult& r : response->results()) {
    ASSERT_TRUE(r.has_cost()) << r.error().message();
    EXPECT_GT(r.cost().median_ms(), 0);
    EXPECT_EQ(r.cost().backend(), BACKEND_ORT_CPU) << "the cost says who measured it";
    EXPECT_THAT(r.cost().device(), HasSubstr("onnxruntime"));
    EXPECT_THAT(r.cost().kernel(), HasSubstr("measured in ONNX Runtime for the cpu backend"));
    EXPECT_FALSE(r.cost().from_cache());
  }
  EXPECT_THAT(response->results(0).cost().kernel(), HasSubstr("no kernel for opaque"));

  // Cached under the ort backend's key: again, and asked of it directly.
  auto again = (*profiler)->MeasureBatch(CpuRequest({Sub()}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->results(0).cost().from_cache());
  MeasureRequest direct = CpuRequest({Sub()});
  direct.set_backend(BACKEND_ORT_CPU);
  auto ort = (*profiler)->MeasureBatch(direct);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(ort->results(0).cost().from_cache());
  EXPECT_EQ(ort->results(0).cost().median_ms(), again->results(0).cost().median_ms());
}

TEST(CpuGapsInOrtTest, WithoutOrtTheyStayUnmeasuredSayingOrtIsMissing) {
  ProfilerOptions options = CpuProfilerOptions();
  options.ort.worker.script = "/nonexistent/profiler/ort/worker.js";
  auto profiler = CostProfiler::Create(options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto response = (*profiler)->MeasureBatch(CpuRequest({Sub(), Gather()}));
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->results_size(), 2);
  const MeasureError& sub = response->results(0).error();
  EXPECT_EQ(sub.code(), static_cast<int>(absl::StatusCode::kUnimplemented));
  EXPECT_THAT(sub.message(), HasSubstr("the cpu backend has no kernel for opaque"));
  EXPECT_THAT(sub.message(), HasSubstr("ONNX Runtime, which measures such operators for it, is unavailable"));
  EXPECT_THAT(sub.message(), HasSubstr("deploy/setup.sh"));

  options.cpu_gaps_in_ort = false;
  auto off = CostProfiler::Create(options);
  ASSERT_TRUE(off.ok()) << off.status();
  response = (*off)->MeasureBatch(CpuRequest({Sub()}));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->results(0).error().message(), Not(HasSubstr("ONNX Runtime")));
}

}  // namespace
}  // namespace taso::profiler
