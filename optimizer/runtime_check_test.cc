// ONNX Runtime's check of a result beside our own: the verdict on a
// comparison, and end to end with the real worker (each case that needs
// onnxruntime-node skips saying what is missing, as the profiler's ort tests
// do) that a planted export bug our own check cannot see is caught there.
#include "optimizer/runtime_check.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/onnx_export.h"
#include "optimizer/optimize.h"
#include "optimizer/optimize_test_models.h"
#include "optimizer/report_proto.h"
#include "profiler/open_client.h"

namespace taso::optimizer {
namespace {

using testing::AddNode;
using testing::Value;
using testing::Weight;

profiler::OutputDifference Output(const std::string& name, double max_abs, double max_rel) {
  profiler::OutputDifference d;
  d.set_name(name);
  d.set_elements(64);
  d.set_max_abs_error(max_abs);
  d.set_max_rel_error(max_rel);
  d.set_differing(max_abs > 0 ? 3 : 0);
  d.set_worst_index(17);
  d.set_worst_reference(1.25);
  d.set_worst_value(1.25 + max_abs);
  return d;
}

TEST(JudgeRuntimeComparisonTest, FloatReorderingWithinTheToleranceIsEqual) {
  profiler::ModelComparison c;
  *c.add_outputs() = Output("y", 2.4e-7, 1.1e-7);
  *c.add_outputs() = Output("z", 0, 0);
  const RuntimeCheck check = JudgeRuntimeComparison(c, 1e-3);
  EXPECT_EQ(check.verdict, RuntimeCheckVerdict::kEqual) << check.reason;
  EXPECT_DOUBLE_EQ(check.max_abs_diff, 2.4e-7);
  EXPECT_DOUBLE_EQ(check.max_rel_diff, 1.1e-7);
  ASSERT_EQ(check.outputs.size(), 2u);
  EXPECT_EQ(check.reason.find("equal in ONNX Runtime on 2 outputs"), 0u) << check.reason;
}

TEST(JudgeRuntimeComparisonTest, EachKindOfDifferenceNamesTheOutput) {
  profiler::ModelComparison beyond;
  *beyond.add_outputs() = Output("ok", 1e-6, 1e-6);
  *beyond.add_outputs() = Output("logits", 0.27, 0.18);
  RuntimeCheck check = JudgeRuntimeComparison(beyond, 1e-3);
  EXPECT_EQ(check.verdict, RuntimeCheckVerdict::kDifferent);
  EXPECT_NE(check.reason.find("output logits differs: max |diff| 0.27, max rel 0.18 (tolerance 0.001)"),
            std::string::npos)
      << check.reason;
  EXPECT_NE(check.reason.find("element 17: 1.25 (input file) vs 1.52 (output file)"), std::string::npos)
      << check.reason;
  EXPECT_EQ(check.reason.find("output ok"), std::string::npos) << "only what differs: " << check.reason;
  EXPECT_DOUBLE_EQ(check.max_abs_diff, 0.27);

  profiler::ModelComparison exact;  // an int64 output one apart: no tolerance for integers
  profiler::OutputDifference shape = Output("shape", 1, 0.5);
  shape.set_exact(true);
  *exact.add_outputs() = shape;
  EXPECT_EQ(JudgeRuntimeComparison(exact, 1e-3).verdict, RuntimeCheckVerdict::kDifferent);
  EXPECT_EQ(JudgeRuntimeComparison(exact, 1.0).verdict, RuntimeCheckVerdict::kDifferent);

  profiler::ModelComparison nan;  // a NaN in one file only: in neither error figure
  profiler::OutputDifference y = Output("y", 0, 0);
  y.set_nonfinite_mismatches(1);
  *nan.add_outputs() = y;
  check = JudgeRuntimeComparison(nan, 1e-3);
  EXPECT_EQ(check.verdict, RuntimeCheckVerdict::kDifferent);
  EXPECT_NE(check.reason.find("1 NaN or infinite"), std::string::npos) << check.reason;

  profiler::ModelComparison missing;
  profiler::OutputDifference gone;
  gone.set_name("aux");
  gone.set_mismatch("missing from this model");
  *missing.add_outputs() = gone;
  check = JudgeRuntimeComparison(missing, 1e-3);
  EXPECT_EQ(check.verdict, RuntimeCheckVerdict::kDifferent);
  EXPECT_NE(check.reason.find("output aux: missing from this model"), std::string::npos) << check.reason;
}

TEST(JudgeRuntimeComparisonTest, AnOutputFileThatDoesNotRunDiffersAndAnInputThatDoesNotIsNoVerdict) {
  profiler::ModelComparison output_failed;
  output_failed.set_failure(profiler::ModelComparison::MODEL_FAILED);
  output_failed.set_error("ONNX Runtime cannot run it: bad node");
  RuntimeCheck check = JudgeRuntimeComparison(output_failed, 1e-3);
  EXPECT_EQ(check.verdict, RuntimeCheckVerdict::kDifferent);
  EXPECT_NE(check.reason.find("bad node"), std::string::npos) << check.reason;

  profiler::ModelComparison input_failed;
  input_failed.set_failure(profiler::ModelComparison::REFERENCE_FAILED);
  input_failed.set_error("ONNX Runtime cannot run the first model: custom op");
  check = JudgeRuntimeComparison(input_failed, 1e-3);
  EXPECT_EQ(check.verdict, RuntimeCheckVerdict::kFailed);
  EXPECT_EQ(check.reason.find("not run: "), 0u) << check.reason;
}

// Q/K/V-like projections of x (MatMul + bias each: the search merges them),
// multiplied together, then a Softmax over the rows (axis 0), which the IR
// does not model: an opaque node, kept verbatim.
std::string ProjectionsSoftmaxModel() {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("projections_softmax");
  *g->add_input() = Value("x", {16, 32});
  *g->add_output() = Value("s", {16, 32});
  for (const std::string h : {"q", "k", "v"}) {
    *g->add_initializer() = Weight("w" + h, {32, 32}, 0.2f);
    *g->add_initializer() = Weight("b" + h, {32}, 0.2f);
    AddNode(g, "MatMul", {"x", "w" + h}, "m" + h);
    AddNode(g, "Add", {"m" + h, "b" + h}, h);
  }
  AddNode(g, "Mul", {"q", "k"}, "qk");
  AddNode(g, "Mul", {"qk", "v"}, "y");
  onnx::AttributeProto* axis = AddNode(g, "Softmax", {"y"}, "s")->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  return m.SerializeAsString();
}

// Analytic costs (deterministic), the never-slower step in ONNX Runtime
// through the real worker, any predicted gain measured.
OptimizerOptions MeasuredInOrt() {
  OptimizerOptions options;
  options.time_limit = absl::Seconds(20);
  options.min_gain = 0;
  options.measure_backend = profiler::BACKEND_ORT_CPU;
  return options;
}

profiler::ProfilerOptions AnalyticCosts() {
  profiler::ProfilerOptions options;
  options.enable_cuda = false;
  options.default_backend = profiler::BACKEND_ANALYTIC;
  options.analytic_device = "h100";
  return options;
}

// The embedded profiler with its ort backend, or a skip naming what is missing.
class OrtRuntimeCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    profiler::CostProfiler* embedded = nullptr;
    auto client = profiler::OpenProfiler("", AnalyticCosts(), &embedded);
    ASSERT_TRUE(client.ok()) << client.status();
    auto ort = embedded->ResolveBackend(profiler::BACKEND_ORT_CPU);
    if (!ort.ok() && ort.status().code() == absl::StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << "ONNX Runtime is not available here: " << ort.status().message();
    }
    ASSERT_TRUE(ort.ok()) << ort.status();
    client_ = std::move(*client);
  }
  std::unique_ptr<profiler::ProfilerClient> client_;
};

// Our exporter, read by ONNX Runtime: the same outputs up to float reordering.
TEST_F(OrtRuntimeCheckTest, TheRealExporterComputesTheSameInOnnxRuntime) {
  const std::string input = ProjectionsSoftmaxModel();
  auto result = OptimizeOnnx(input, {}, *client_, MeasuredInOrt());
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  ASSERT_FALSE(r.output_is_input) << "the test needs a candidate the search changed: " << r.measurement_detail;
  EXPECT_FALSE(r.returned_original) << r.error;
  EXPECT_TRUE(r.check.ran && r.check.equal) << r.check.reason;
  EXPECT_EQ(r.runtime_check.verdict, RuntimeCheckVerdict::kEqual) << r.runtime_check.reason;
  EXPECT_LT(r.runtime_check.max_abs_diff, 1e-4) << r.runtime_check.reason;
  EXPECT_LT(r.runtime_check.max_rel_diff, 1e-4) << r.runtime_check.reason;
  ASSERT_EQ(r.runtime_check.outputs.size(), 1u);
  EXPECT_EQ(r.runtime_check.outputs[0].name(), "s");
  EXPECT_EQ(r.runtime_check.outputs[0].elements(), 16 * 32);
  EXPECT_TRUE(r.measurement == MeasureVerdict::kKeptCandidate || r.measurement == MeasureVerdict::kKeptBaseline)
      << r.measurement_detail;
  const Report proto = ReportToProto(r);
  EXPECT_EQ(proto.runtime_check(), RUNTIME_CHECK_EQUAL);
  EXPECT_EQ(proto.runtime_max_abs_error(), r.runtime_check.max_abs_diff);
  EXPECT_EQ(proto.max_abs_error(), r.check.max_abs_diff) << "our own check's figure stays beside it";
  ASSERT_EQ(proto.runtime_outputs_size(), 1);
  EXPECT_EQ(proto.runtime_outputs(0).name(), "s");
  EXPECT_EQ(proto.runtime_check_detail().find("equal in ONNX Runtime on 1 output"), 0u)
      << proto.runtime_check_detail();
}

// The planted bug: an exporter that writes the Softmax without its axis
// attribute, as one rewriting a node's attributes for another opset might
// (Softmax's default axis is 1 before opset 13 and -1 from it, so dropping an
// explicit axis is a real way to get this wrong). The model stays valid ONNX
// of the same shapes, so it imports again, and our own check passes: the IR
// keeps Softmax opaque and our interpreter's stand-in for opaque nodes
// (numeric_check.cc StandIn) depends on their inputs and output shapes only,
// never on their attributes. ONNX Runtime normalises over the columns instead
// of the rows: its comparison fails the candidate, and the input comes back.
TEST_F(OrtRuntimeCheckTest, AnExportBugOurCheckCannotSeeIsCaughtInOnnxRuntime) {
  OnnxExporter drops_softmax_axis = [](const OnnxModel& model, const Graph& graph,
                                       OnnxExternalSink* sink) -> absl::StatusOr<std::string> {
    auto bytes = ExportOnnx(model, graph, sink);
    if (!bytes.ok()) return bytes;
    onnx::ModelProto m;
    if (!m.ParseFromString(*bytes)) return absl::InternalError("unparsable export");
    for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node()) {
      if (n.op_type() == "Softmax") n.clear_attribute();
    }
    return m.SerializeAsString();
  };
  const std::string input = ProjectionsSoftmaxModel();
  auto result = OptimizeOnnx(input, {}, *client_, MeasuredInOrt(), drops_softmax_axis);
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  EXPECT_TRUE(r.check.ran && r.check.equal) << "our own check must not see it: " << r.check.reason;
  EXPECT_EQ(r.runtime_check.verdict, RuntimeCheckVerdict::kDifferent) << r.runtime_check.reason;
  EXPECT_TRUE(r.returned_original);
  EXPECT_EQ(result->model, input) << "the input, byte for byte";
  EXPECT_EQ(r.input_sha256, r.output_sha256);
  EXPECT_EQ(r.measurement, MeasureVerdict::kOutputsDiffer) << r.measurement_detail;
  EXPECT_NE(r.error.find("ONNX Runtime computes different outputs for the output file: output s differs"),
            std::string::npos)
      << r.error;
  EXPECT_GT(r.runtime_check.max_abs_diff, 0.01) << r.runtime_check.reason;
  const Report proto = ReportToProto(r);
  EXPECT_EQ(proto.runtime_check(), RUNTIME_CHECK_DIFFERENT);
  EXPECT_EQ(proto.measurement(), OUTPUTS_DIFFER);
  EXPECT_TRUE(proto.verified_numerically());
  EXPECT_GT(proto.runtime_max_abs_error(), 0.01);
  ASSERT_EQ(proto.runtime_outputs_size(), 1);
  EXPECT_EQ(proto.runtime_outputs(0).name(), "s");
  EXPECT_GT(proto.runtime_outputs(0).differing(), 0);
}

// No ONNX Runtime (here: no node to run the worker with): the step says it
// was skipped and why, and the result stands on our own check.
TEST(RuntimeCheckUnavailableTest, IsReportedAsSkippedWithTheReason) {
  profiler::ProfilerOptions no_node = AnalyticCosts();
  no_node.ort.worker.node = "taso-no-such-node-binary";
  auto client = profiler::OpenProfiler("", no_node);
  ASSERT_TRUE(client.ok()) << client.status();
  auto result = OptimizeOnnx(ProjectionsSoftmaxModel(), {}, **client, MeasuredInOrt());
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  EXPECT_EQ(r.runtime_check.verdict, RuntimeCheckVerdict::kSkippedUnavailable) << r.runtime_check.reason;
  EXPECT_EQ(r.runtime_check.reason.find("not run: ONNX Runtime did not run the files ("), 0u)
      << r.runtime_check.reason;
  EXPECT_NE(r.runtime_check.reason.find("install node"), std::string::npos) << r.runtime_check.reason;
  EXPECT_FALSE(r.returned_original) << r.error;
  EXPECT_EQ(ReportToProto(r).runtime_check(), RUNTIME_CHECK_SKIPPED_UNAVAILABLE);

  // Measured on another backend, or not at all: skipped, saying so.
  OptimizerOptions not_measured = MeasuredInOrt();
  not_measured.measure = false;
  auto off = OptimizeOnnx(ProjectionsSoftmaxModel(), {}, **client, not_measured);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->report.runtime_check.verdict, RuntimeCheckVerdict::kSkipped) << off->report.runtime_check.reason;
  EXPECT_NE(off->report.runtime_check.reason.find("disabled"), std::string::npos) << off->report.runtime_check.reason;
  OptimizerOptions on_costs = MeasuredInOrt();
  on_costs.measure_backend = profiler::BACKEND_UNSPECIFIED;  // the analytic backend, which runs nothing
  auto analytic = OptimizeOnnx(ProjectionsSoftmaxModel(), {}, **client, on_costs);
  ASSERT_TRUE(analytic.ok()) << analytic.status();
  EXPECT_EQ(analytic->report.runtime_check.verdict, RuntimeCheckVerdict::kSkipped)
      << analytic->report.runtime_check.reason;
  EXPECT_NE(analytic->report.runtime_check.reason.find("analytic backend"), std::string::npos)
      << analytic->report.runtime_check.reason;
}

}  // namespace
}  // namespace taso::optimizer
