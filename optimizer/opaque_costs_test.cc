// Opaque operators in the costs a search compares: what they need to run
// alone (the importer's OpaqueInfo opset and slots), what ONNX Runtime folds at load and so costs
// nothing (cost_model.h), and, end to end on PyTorch's GRU exports with the
// embedded profiler, that every operator is measured (the cpu backend has
// ONNX Runtime measure the opaque ones). The end-to-end cases skip, saying
// what is missing, where ONNX Runtime is not installed.
#include <fstream>
#include <map>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/passes/cost_model.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/optimize.h"
#include "profiler/open_client.h"
#include "profiler/ort/ort_backend.h"

namespace taso::optimizer {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// optimizer/testdata/make_gru_models.py writes them.
std::string ReadModel(const std::string& name) {
  std::ifstream in("optimizer/testdata/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

OnnxModel Import(const std::string& name) {
  auto model = ImportOnnx(ReadModel(name));
  EXPECT_TRUE(model.ok()) << name << ": " << model.status();
  if (!model.ok()) return {};
  return *std::move(model);
}

// The opaque nodes by ONNX operator type (the first of each).
std::map<std::string, const Node*> OpaqueByType(const Graph& g) {
  std::map<std::string, const Node*> out;
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kOpaque) out.emplace(n.params.opaque.op_type, &n);
  }
  return out;
}

TEST(OpaqueFormsTest, TheGruKeepsItsOmittedSequenceLengthsAndEveryNodeItsOpset) {
  const OnnxModel model = Import("gru_op.onnx");
  const auto opaque = OpaqueByType(model.graph);
  ASSERT_TRUE(opaque.count("GRU"));
  const OpaqueInfo& gru = opaque.at("GRU")->params.opaque;
  EXPECT_EQ(gru.opset, 17);
  // X, W, R, B, "" (sequence_lens), initial_h.
  EXPECT_THAT(gru.input_slots, ElementsAre(0, 1, 2, 3, OpaqueInfo::kOmitted, 4));
  EXPECT_THAT(gru.output_slots, IsEmpty()) << "Y and Y_h, in order";
  for (const auto& [type, node] : opaque) {
    EXPECT_EQ(node->params.opaque.opset, 17) << type;
    if (type != "GRU") {
      EXPECT_THAT(node->params.opaque.input_slots, IsEmpty()) << type;
    }
  }
}

TEST(FoldedAtLoadTest, ShapeArithmeticOnStaticShapesIsFoldedAndTheRecurrenceIsNot) {
  const OnnxModel op = Import("gru_op.onnx");
  const std::vector<bool> folded = FoldedAtLoad(op.graph);
  std::map<std::string, bool> by_type;
  for (const Node& n : op.graph.nodes()) {
    if (n.kind == OpKind::kOpaque) by_type[n.params.opaque.op_type] = folded[n.id];
  }
  // What ONNX Runtime folds in this model (checked with its optimized model).
  for (const char* type : {"Shape", "Gather", "Unsqueeze", "Concat", "Expand"}) {
    EXPECT_TRUE(by_type[type]) << type;
  }
  EXPECT_FALSE(by_type["GRU"]);
  EXPECT_FALSE(by_type["Squeeze"]);

  const OnnxModel unrolled = Import("gru_unrolled.onnx");
  const std::vector<bool> runtime = FoldedAtLoad(unrolled.graph);
  for (const Node& n : unrolled.graph.nodes()) {
    if (n.kind == OpKind::kOpaque) {
      EXPECT_FALSE(runtime[n.id]) << n.params.opaque.op_type << " reads the input";
    }
  }
}

// The embedded profiler on the default (cpu) backend, quick timings.
absl::StatusOr<std::unique_ptr<profiler::ProfilerClient>> EmbeddedCpu() {
  profiler::ProfilerOptions options;
  options.enable_cuda = false;
  options.default_backend = profiler::BACKEND_CPU;
  options.cpu.threads = 1;
  options.timing.warmup = 3;
  options.timing.repetitions = 8;
  options.timing.min_timed_ms = 2;
  return profiler::OpenProfiler("", options);
}

class GruExportsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (auto ort = profiler::OrtBackend::Create(profiler::OrtBackendOptions{}); !ort.ok()) {
      GTEST_SKIP() << "ONNX Runtime is not available here: " << ort.status().message();
    }
  }
};

TEST_P(GruExportsTest, NoOperatorIsLeftUnmeasured) {
  auto client = EmbeddedCpu();
  ASSERT_TRUE(client.ok()) << client.status();
  OptimizerOptions options;
  options.time_limit = absl::Seconds(3);
  options.measure = false;  // the costs are what this is about
  auto result = OptimizeOnnx(ReadModel(GetParam()), {}, **client, options);
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  for (const auto& [signature, why] : r.unmeasured_operators) ADD_FAILURE() << signature << ": " << why;
  EXPECT_EQ(r.cost_backend, profiler::BACKEND_CPU) << "the backend that answered, not ONNX Runtime's";
  EXPECT_GT(r.cost_before_ms, 0);
  EXPECT_FALSE(r.opaque_operators.empty());
}

INSTANTIATE_TEST_SUITE_P(PyTorch, GruExportsTest, ::testing::Values("gru_unrolled.onnx", "gru_op.onnx"));

}  // namespace
}  // namespace taso::optimizer
