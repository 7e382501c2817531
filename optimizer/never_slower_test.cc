// The never-slower step in-process: the optimized model and the input as the
// runtime runs it, timed whole (here by a profiler whose whole-graph medians a
// test fixes), and what comes back when the candidate is not faster.
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "optimizer/optimize.h"
#include "optimizer/optimize_test_models.h"
#include "optimizer/report_proto.h"
#include "optimizer/rewrite/test_util.h"
#include "profiler/open_client.h"

namespace taso::optimizer {
namespace {

using testing::AddNode;
using testing::AnyGain;
using testing::ConvReluModel;
using testing::Opset13Model;
using testing::ProjectionsModel;
using testing::Value;
using testing::Weight;


// Costs from the analytic model; whole graphs "measured" with fixed medians,
// so a test can say which of baseline and candidate is faster.
class FixedGraphTimes : public testing::ForwardingProfiler {
 public:
  FixedGraphTimes(double baseline_ms, double candidate_ms)
      : ForwardingProfiler(testing::AnalyticProfiler()), baseline_ms_(baseline_ms), candidate_ms_(candidate_ms) {}
  absl::StatusOr<profiler::MeasureResponse> MeasureBatch(const profiler::MeasureRequest& r) override {
    profiler::MeasureRequest analytic = r;  // costs stand in for whichever backend the test names
    analytic.set_backend(profiler::BACKEND_ANALYTIC);
    analytic.set_threads(0);
    batch_threads = r.threads();
    auto response = inner().MeasureBatch(analytic);
    if (response.ok() && cost_backend != profiler::BACKEND_UNSPECIFIED) {
      response->set_backend(cost_backend);
      response->set_threads(r.threads());
      if (r.backend() == profiler::BACKEND_UNSPECIFIED) response->set_backend_choice("the test's choice");
      for (auto& result : *response->mutable_results()) {
        if (result.has_cost()) result.mutable_cost()->set_backend(cost_backend);
      }
    }
    return response;
  }
  absl::StatusOr<profiler::MeasureGraphResponse> MeasureGraph(const profiler::MeasureGraphRequest& r) override {
    ++graph_calls;
    graphs_per_call = r.graphs_size();
    models_per_call = r.onnx_models_size();
    backend_asked = r.backend();
    graph_threads = r.threads();
    if (missing_backend && r.backend() == *missing_backend) return absl::FailedPreconditionError("no such backend here");
    if (r.onnx_models_size() > 0) {
      first_model = r.onnx_models(0);
      if (refuse_models) return absl::UnimplementedError("this profiler does not take ONNX models");
    }
    profiler::MeasureGraphResponse response;
    const int n = r.graphs_size() + r.onnx_models_size();
    response.set_interleaved(n > 1);
    for (int i = 0; i < n; ++i) {
      profiler::GraphMeasurement* m = response.add_results()->mutable_measurement();
      m->set_median_ms(i == 0 ? baseline_ms_ : candidate_ms_);
      m->set_min_ms(m->median_ms());
      m->set_runs(10);
      m->set_device("fixed test times");
      m->set_backend(r.backend());
      for (double ms : i == 0 ? baseline_passes : candidate_passes) m->add_pass_median_ms(ms);
    }
    return response;
  }
  std::string Describe() const override { return "fixed graph times"; }
  int graph_calls = 0;
  int graphs_per_call = 0;
  int models_per_call = 0;
  std::string first_model;
  bool refuse_models = false;
  profiler::Backend backend_asked = profiler::BACKEND_UNSPECIFIED;
  int batch_threads = -1, graph_threads = -1;  // the thread counts asked for
  // The backend the costs say answered (unspecified: analytic's own), and
  // one MeasureGraph refuses as missing.
  profiler::Backend cost_backend = profiler::BACKEND_UNSPECIFIED;
  std::optional<profiler::Backend> missing_backend;
  // Per-pass medians reported beside the fixed medians (none by default).
  std::vector<double> baseline_passes, candidate_passes;

 private:
  double baseline_ms_, candidate_ms_;
};

// Never slower: a candidate measured slower than the baseline is not
// returned; the input comes back byte for byte, and the report says why.
TEST(NeverSlowerTest, CandidateMeasuredSlowerReturnsTheInput) {
  FixedGraphTimes slower(/*baseline_ms=*/1.0, /*candidate_ms=*/1.5);
  const std::string input = ConvReluModel();
  auto result = OptimizeOnnx(input, {}, slower, AnyGain());
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  EXPECT_EQ(slower.graph_calls, 1);
  EXPECT_EQ(slower.graphs_per_call, 2) << "baseline and candidate in one interleaved call";
  EXPECT_EQ(r.measurement, MeasureVerdict::kKeptBaseline) << r.measurement_detail;
  EXPECT_EQ(result->model, input);
  EXPECT_FALSE(r.returned_original) << "a slower candidate is no failed check";
  EXPECT_EQ(r.measured_baseline_ms, 1.0);
  EXPECT_EQ(r.measured_after_ms, 1.5);
  EXPECT_EQ(r.cost_after_ms, r.cost_baseline_ms) << "the input runs as the baseline";
  // The rejected candidate's prediction stays in the report, so a prediction
  // can be checked against what was measured even when the input comes back.
  EXPECT_GT(r.candidate_cost_ms, 0) << "the rejected candidate's prediction is kept";
  EXPECT_LE(r.candidate_cost_ms, r.cost_baseline_ms) << "a candidate is never predicted slower than the baseline";
  EXPECT_EQ(r.operators_after, r.operators_before);
  EXPECT_NE(r.measurement_detail.find("50.0% slower"), std::string::npos) << r.measurement_detail;
  const Report proto = ReportToProto(r);
  EXPECT_EQ(proto.measurement(), MEASURED_KEPT_BASELINE);
  EXPECT_EQ(proto.candidate_cost_ms(), r.candidate_cost_ms);
  EXPECT_EQ(proto.measured_after_ms(), 1.5);
  EXPECT_EQ(proto.measured_runs(), 10);
}

TEST(NeverSlowerTest, CandidateWithinTheToleranceIsKept) {
  FixedGraphTimes within(/*baseline_ms=*/1.0, /*candidate_ms=*/1.005);
  auto result = OptimizeOnnx(ConvReluModel(), {}, within, AnyGain());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.measurement, MeasureVerdict::kKeptCandidate) << result->report.measurement_detail;
  EXPECT_NE(result->model, ConvReluModel());
  EXPECT_LT(result->report.operators_after, result->report.operators_before);

  OptimizerOptions strict = AnyGain();
  strict.measure_tolerance = 0;
  FixedGraphTimes again(1.0, 1.005);
  auto kept_input = OptimizeOnnx(ConvReluModel(), {}, again, strict);
  ASSERT_TRUE(kept_input.ok()) << kept_input.status();
  EXPECT_EQ(kept_input->report.measurement, MeasureVerdict::kKeptBaseline);
}

// Costs from the cpu backend (oneDNN) and no measure backend named: the
// runtime a CPU user runs, ONNX Runtime, times the input and output files.
// Without it, the cpu backend's graph runner decides and the report says so.
TEST(NeverSlowerTest, CpuCostsAreMeasuredInOnnxRuntimeByDefault) {
  OptimizerOptions cpu = AnyGain();
  cpu.backend = profiler::BACKEND_CPU;
  FixedGraphTimes slower(/*baseline_ms=*/1.0, /*candidate_ms=*/1.5);
  slower.cost_backend = profiler::BACKEND_CPU;
  const std::string input = ConvReluModel();
  auto result = OptimizeOnnx(input, {}, slower, cpu);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.cost_backend, profiler::BACKEND_CPU);
  EXPECT_EQ(slower.backend_asked, profiler::BACKEND_ORT_CPU);
  EXPECT_EQ(slower.models_per_call, 2) << "the files, as the user runs them";
  EXPECT_EQ(slower.first_model, input);
  EXPECT_EQ(result->report.measurement, MeasureVerdict::kKeptBaseline) << result->report.measurement_detail;

  FixedGraphTimes no_ort(/*baseline_ms=*/1.0, /*candidate_ms=*/1.5);
  no_ort.cost_backend = profiler::BACKEND_CPU;
  no_ort.missing_backend = profiler::BACKEND_ORT_CPU;
  auto fallen_back = OptimizeOnnx(input, {}, no_ort, cpu);
  ASSERT_TRUE(fallen_back.ok()) << fallen_back.status();
  EXPECT_EQ(no_ort.graph_calls, 2) << "ort refused, then the cpu runner";
  EXPECT_EQ(no_ort.backend_asked, profiler::BACKEND_CPU);
  EXPECT_EQ(no_ort.graphs_per_call, 2);
  EXPECT_EQ(fallen_back->report.measurement, MeasureVerdict::kKeptBaseline) << fallen_back->report.measurement_detail;
  EXPECT_NE(fallen_back->report.measurement_detail.find(
                "ONNX Runtime could not be run (no such backend here), so the cpu backend's graph runner decided"),
            std::string::npos)
      << fallen_back->report.measurement_detail;

  // Asked for by name, the cpu runner is used and nothing else is tried.
  OptimizerOptions named = cpu;
  named.measure_backend = profiler::BACKEND_CPU;
  FixedGraphTimes runner(1.0, 1.5);
  runner.cost_backend = profiler::BACKEND_CPU;
  ASSERT_TRUE(OptimizeOnnx(input, {}, runner, named).ok());
  EXPECT_EQ(runner.graph_calls, 1);
  EXPECT_EQ(runner.backend_asked, profiler::BACKEND_CPU);

  // Costs from another backend are measured there, as before.
  FixedGraphTimes analytic(1.0, 1.5);
  ASSERT_TRUE(OptimizeOnnx(input, {}, analytic, AnyGain()).ok());
  EXPECT_NE(analytic.backend_asked, profiler::BACKEND_ORT_CPU);
}

// Under the ort backend the files themselves are timed: the input as the
// user gave it against the exported candidate, since ORT runs a re-exported
// graph differently from the file. A profiler that cannot take models gets
// the IR graphs instead.
TEST(NeverSlowerTest, OrtBackendTimesTheInputAndOutputFiles) {
  OptimizerOptions ort = AnyGain();
  ort.backend = profiler::BACKEND_ORT_CPU;
  FixedGraphTimes slower(/*baseline_ms=*/1.0, /*candidate_ms=*/1.5);
  const std::string input = ConvReluModel();
  auto result = OptimizeOnnx(input, {}, slower, ort);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(slower.graph_calls, 1);
  EXPECT_EQ(slower.models_per_call, 2);
  EXPECT_EQ(slower.graphs_per_call, 0);
  EXPECT_EQ(slower.first_model, input) << "the input file as the user gave it";
  EXPECT_EQ(result->report.measurement, MeasureVerdict::kKeptBaseline) << result->report.measurement_detail;
  EXPECT_EQ(result->model, input);
  EXPECT_NE(result->report.measurement_detail.find("input and output files"), std::string::npos)
      << result->report.measurement_detail;

  FixedGraphTimes old_profiler(/*baseline_ms=*/1.0, /*candidate_ms=*/0.5);
  old_profiler.refuse_models = true;
  auto fallback = OptimizeOnnx(input, {}, old_profiler, ort);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(old_profiler.graph_calls, 2) << "models refused, then the graphs";
  EXPECT_EQ(old_profiler.graphs_per_call, 2);
  EXPECT_EQ(fallback->report.measurement, MeasureVerdict::kKeptCandidate) << fallback->report.measurement_detail;
  EXPECT_NE(fallback->report.measurement_detail.find("baseline and candidate graphs"), std::string::npos)
      << fallback->report.measurement_detail;
}

// With no backend asked for, the profiler's choice is the configuration:
// when it is ort, the never-slower step times the files there, and every
// request carries the thread count asked for. The report says all of it.
TEST(NeverSlowerTest, AutoChoiceOfOrtTimesTheFilesAtTheThreadsAsked) {
  OptimizerOptions options = AnyGain();
  options.threads = 3;
  FixedGraphTimes chose_ort(/*baseline_ms=*/1.0, /*candidate_ms=*/0.5);
  chose_ort.cost_backend = profiler::BACKEND_ORT_CPU;
  auto result = OptimizeOnnx(ConvReluModel(), {}, chose_ort, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(chose_ort.batch_threads, 3);
  EXPECT_EQ(chose_ort.graph_threads, 3);
  EXPECT_EQ(chose_ort.backend_asked, profiler::BACKEND_ORT_CPU) << "ort named, so the files are timed";
  EXPECT_EQ(chose_ort.models_per_call, 2);
  const optimizer::Report report = ReportToProto(result->report);
  EXPECT_EQ(report.cost_backend(), profiler::BACKEND_ORT_CPU) << "the backend that answered, not the one asked";
  EXPECT_EQ(report.threads(), 3);
  EXPECT_EQ(report.cost_backend_choice(), "the test's choice");
  ASSERT_EQ(report.input_shapes_size(), 1);
  EXPECT_EQ(report.input_shapes(0), "x=1x4x8x8");

  OptimizerOptions named = AnyGain();
  named.backend = profiler::BACKEND_ORT_CPU;
  FixedGraphTimes asked(/*baseline_ms=*/1.0, /*candidate_ms=*/0.5);
  asked.cost_backend = profiler::BACKEND_ORT_CPU;
  auto chosen_by_user = OptimizeOnnx(ConvReluModel(), {}, asked, named);
  ASSERT_TRUE(chosen_by_user.ok()) << chosen_by_user.status();
  EXPECT_EQ(chosen_by_user->report.cost_backend_choice, "") << "a backend asked for is no choice of taso's";
  EXPECT_EQ(asked.batch_threads, 0) << "no --threads: the profiler's own count";
}

// The decision takes the geometric mean of the per-pass ratios where both
// orders were timed: here the pooled medians say the candidate is 2 % slower,
// but the passes (each favouring whichever session was created second) say
// it is faster in both orders.
TEST(NeverSlowerTest, PerPassRatiosCancelTheOrderBias) {
  FixedGraphTimes passes(/*baseline_ms=*/1.00, /*candidate_ms=*/1.02);
  passes.baseline_passes = {1.10, 0.95};
  passes.candidate_passes = {1.05, 0.94};
  auto result = OptimizeOnnx(ConvReluModel(), {}, passes, AnyGain());
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  EXPECT_EQ(r.measurement, MeasureVerdict::kKeptCandidate) << r.measurement_detail;
  EXPECT_NEAR(r.measured_speedup, std::sqrt(1.10 / 1.05 * 0.95 / 0.94), 1e-9);
  EXPECT_NEAR(ReportToProto(r).measured_speedup(), r.measured_speedup, 1e-12);

  // Slower in both orders: the input comes back, whatever the pooled medians say.
  FixedGraphTimes slower(/*baseline_ms=*/1.00, /*candidate_ms=*/0.99);
  slower.baseline_passes = {1.00, 0.90};
  slower.candidate_passes = {1.06, 0.96};
  auto kept_input = OptimizeOnnx(ConvReluModel(), {}, slower, AnyGain());
  ASSERT_TRUE(kept_input.ok()) << kept_input.status();
  EXPECT_EQ(kept_input->report.measurement, MeasureVerdict::kKeptBaseline) << kept_input->report.measurement_detail;
  EXPECT_LT(kept_input->report.measured_speedup, 0.95);
  EXPECT_EQ(kept_input->model, ConvReluModel());
}

// --measure-backend ort: costs from one backend, the never-slower step in
// ONNX Runtime on the files themselves; the report names the backend.
TEST(NeverSlowerTest, MeasureBackendTimesTheFilesInOrtWhateverTheCostBackend) {
  OptimizerOptions options = AnyGain();
  options.backend = profiler::BACKEND_CPU;
  options.measure_backend = profiler::BACKEND_ORT_CPU;
  FixedGraphTimes slower(/*baseline_ms=*/1.0, /*candidate_ms=*/1.5);
  const std::string input = ConvReluModel();
  auto result = OptimizeOnnx(input, {}, slower, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(slower.models_per_call, 2) << "the input and output files";
  EXPECT_EQ(slower.graphs_per_call, 0);
  EXPECT_EQ(slower.backend_asked, profiler::BACKEND_ORT_CPU);
  EXPECT_EQ(slower.first_model, input);
  EXPECT_EQ(result->report.measurement, MeasureVerdict::kKeptBaseline) << result->report.measurement_detail;
  EXPECT_EQ(result->report.measured_backend, profiler::BACKEND_ORT_CPU);
  EXPECT_EQ(ReportToProto(result->report).measured_backend(), profiler::BACKEND_ORT_CPU);
  EXPECT_EQ(result->model, input);

  // Unset, the cost backend measures, on the IR graphs (cpu runs no files).
  options.measure_backend = profiler::BACKEND_UNSPECIFIED;
  FixedGraphTimes faster(/*baseline_ms=*/1.0, /*candidate_ms=*/0.5);
  auto on_costs = OptimizeOnnx(input, {}, faster, options);
  ASSERT_TRUE(on_costs.ok()) << on_costs.status();
  EXPECT_EQ(faster.backend_asked, profiler::BACKEND_CPU);
  EXPECT_EQ(faster.graphs_per_call, 2);
  EXPECT_EQ(on_costs->report.measurement, MeasureVerdict::kKeptCandidate);
  EXPECT_DOUBLE_EQ(on_costs->report.measured_speedup, 2.0);
}

// A result predicted faster than the runtime baseline by less than the
// minimum gain comes back as the input, byte for byte and unmeasured; 0
// keeps any predicted gain.
TEST(NeverSlowerTest, AResultBelowTheMinimumGainReturnsTheInput) {
  const std::string input = ProjectionsModel();  // its Q/K/V merge is predicted faster
  FixedGraphTimes first(/*baseline_ms=*/1.0, /*candidate_ms=*/0.5);
  auto kept = OptimizeOnnx(input, {}, first, AnyGain());
  ASSERT_TRUE(kept.ok()) << kept.status();
  const double predicted = kept->report.cost_baseline_ms / kept->report.cost_after_ms;
  ASSERT_GT(predicted, 1.0) << "the test needs a result predicted faster";
  ASSERT_EQ(kept->report.measurement, MeasureVerdict::kKeptCandidate) << kept->report.measurement_detail;

  OptimizerOptions demanding;
  demanding.min_gain = (predicted - 1) * 1.5;  // more than it is predicted to gain
  FixedGraphTimes second(1.0, 0.5);
  auto below = OptimizeOnnx(input, {}, second, demanding);
  ASSERT_TRUE(below.ok()) << below.status();
  const OptimizeReport& r = below->report;
  EXPECT_EQ(r.measurement, MeasureVerdict::kSkippedBelowMinGain) << r.measurement_detail;
  EXPECT_EQ(second.graph_calls, 0) << "not measured";
  EXPECT_EQ(below->model, input) << "byte for byte";
  EXPECT_TRUE(r.output_is_input);
  EXPECT_FALSE(r.returned_original);
  EXPECT_EQ(r.cost_after_ms, r.cost_baseline_ms);
  EXPECT_NE(r.measurement_detail.find("minimum gain"), std::string::npos) << r.measurement_detail;
  EXPECT_EQ(ReportToProto(r).measurement(), SKIPPED_BELOW_MIN_GAIN);

  demanding.min_gain = (predicted - 1) * 0.5;  // less than it gains: kept
  FixedGraphTimes third(1.0, 0.5);
  auto above = OptimizeOnnx(input, {}, third, demanding);
  ASSERT_TRUE(above.ok()) << above.status();
  EXPECT_EQ(above->report.measurement, MeasureVerdict::kKeptCandidate) << above->report.measurement_detail;
  EXPECT_NE(above->model, input);
}

// The measurement must show the minimum gain too: a candidate measured
// faster, but by less than it, is noise to its user and the input comes back.
TEST(NeverSlowerTest, AResultMeasuredFasterByLessThanTheMinimumGainReturnsTheInput) {
  const std::string input = ProjectionsModel();
  FixedGraphTimes first(/*baseline_ms=*/1.0, /*candidate_ms=*/0.5);
  auto kept = OptimizeOnnx(input, {}, first, AnyGain());
  ASSERT_TRUE(kept.ok()) << kept.status();
  const double predicted = kept->report.cost_baseline_ms / kept->report.cost_after_ms;
  ASSERT_GT(predicted, 1.0) << "the test needs a result predicted faster";

  OptimizerOptions demanding;
  demanding.min_gain = (predicted - 1) * 0.5;  // the prediction passes
  const double barely = 1 / (1 + demanding.min_gain / 2);  // measured faster by half the minimum gain
  FixedGraphTimes noise(1.0, barely);
  auto below = OptimizeOnnx(input, {}, noise, demanding);
  ASSERT_TRUE(below.ok()) << below.status();
  const OptimizeReport& r = below->report;
  EXPECT_EQ(noise.graph_calls, 1) << "measured";
  EXPECT_EQ(r.measurement, MeasureVerdict::kKeptBaseline) << r.measurement_detail;
  EXPECT_EQ(below->model, input) << "byte for byte";
  EXPECT_GT(r.measured_speedup, 1.0);
  EXPECT_NE(r.measurement_detail.find("less than the minimum gain"), std::string::npos) << r.measurement_detail;

  // With no minimum gain, the tolerance decides: the same result is kept.
  FixedGraphTimes again(1.0, barely);
  auto any = OptimizeOnnx(input, {}, again, AnyGain());
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->report.measurement, MeasureVerdict::kKeptCandidate) << any->report.measurement_detail;
}

TEST(NeverSlowerTest, NoMeasureSkipsIt) {
  FixedGraphTimes slower(1.0, 1.5);
  OptimizerOptions options = AnyGain();
  options.measure = false;
  auto result = OptimizeOnnx(ConvReluModel(), {}, slower, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(slower.graph_calls, 0);
  EXPECT_EQ(result->report.measurement, MeasureVerdict::kSkippedDisabled);
  EXPECT_EQ(ReportToProto(result->report).measurement(), SKIPPED_DISABLED);
  EXPECT_NE(result->model, ConvReluModel());
}

// x -> MatMul(w) -> y: nothing for a search to do that a runtime does not.
std::string LoneMatMulModel() {
  onnx::ModelProto m = Opset13Model("lone_matmul");
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_input() = Value("x", {8, 16});
  *g->add_output() = Value("y", {8, 4});
  *g->add_initializer() = Weight("w", {16, 4});
  AddNode(g, "MatMul", {"x", "w"}, "y");
  return m.SerializeAsString();
}

// A profiler that cannot measure matmuls (analytic costs for the rest): the
// report names them and why, instead of their costing 0 unsaid.
class NoMatMuls : public FixedGraphTimes {
 public:
  NoMatMuls() : FixedGraphTimes(1.0, 1.0) {}
  absl::StatusOr<profiler::MeasureResponse> MeasureBatch(const profiler::MeasureRequest& r) override {
    auto response = FixedGraphTimes::MeasureBatch(r);
    if (!response.ok()) return response;
    for (int i = 0; i < r.signatures_size() && i < response->results_size(); ++i) {
      if (r.signatures(i).kind() != ir::OP_MATMUL) continue;
      profiler::MeasureError* e = response->mutable_results(i)->mutable_error();
      e->set_code(12);
      e->set_message("no matmul kernel here");
    }
    return response;
  }
};

TEST(UnmeasuredTest, OperatorsTheProfilerCannotMeasureAreReported) {
  NoMatMuls profiler;
  auto result = OptimizeOnnx(LoneMatMulModel(), {}, profiler, AnyGain());
  ASSERT_TRUE(result.ok()) << result.status();
  const auto& unmeasured = result->report.unmeasured_operators;
  ASSERT_EQ(unmeasured.size(), 1u);
  EXPECT_EQ(unmeasured.begin()->first.rfind("matmul", 0), 0u) << unmeasured.begin()->first;
  EXPECT_EQ(unmeasured.begin()->second, "no matmul kernel here");
  const Report proto = ReportToProto(result->report);
  ASSERT_EQ(proto.unmeasured_operators_size(), 1);
  EXPECT_EQ(proto.unmeasured_operators().begin()->second, "no matmul kernel here");
  // Measured everywhere: nothing to report.
  FixedGraphTimes all(1.0, 1.0);
  auto measured = OptimizeOnnx(LoneMatMulModel(), {}, all, AnyGain());
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_TRUE(measured->report.unmeasured_operators.empty());
}

// A result that is the runtime baseline's own graph comes back as the input
// itself, not re-exported (a re-export only reorders what the runtime runs),
// unless export_baseline asks for the re-export; neither is measured as a
// comparison there is nothing to compare.
TEST(OutputIsInputTest, NothingBeyondTheBaselineReturnsTheInputByteForByte) {
  const std::string input = LoneMatMulModel();
  FixedGraphTimes times(1.0, 1.0);
  auto result = OptimizeOnnx(input, {}, times, AnyGain());
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  EXPECT_TRUE(r.output_is_input);
  EXPECT_FALSE(r.returned_original) << "nothing found is no failure";
  EXPECT_EQ(result->model, input);
  EXPECT_EQ(r.input_sha256, r.output_sha256);
  EXPECT_EQ(r.measurement, MeasureVerdict::kSkippedInputReturned) << r.measurement_detail;
  EXPECT_EQ(times.graph_calls, 0);
  EXPECT_TRUE(r.check.ran && r.check.equal) << r.check.reason;
  EXPECT_EQ(r.cost_after_ms, r.cost_baseline_ms);
  const Report proto = ReportToProto(r);
  EXPECT_TRUE(proto.output_is_input());
  EXPECT_EQ(proto.measurement(), SKIPPED_INPUT_RETURNED);

  OptimizerOptions reexport;
  reexport.export_baseline = true;
  FixedGraphTimes again(1.0, 1.0);
  auto exported = OptimizeOnnx(input, {}, again, reexport);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_FALSE(exported->report.output_is_input);
  EXPECT_NE(exported->model, input) << "re-exported by our exporter";
  EXPECT_EQ(exported->report.measurement, MeasureVerdict::kKeptReexport) << exported->report.measurement_detail;
  EXPECT_EQ(ReportToProto(exported->report).measurement(), MEASURED_KEPT_REEXPORT);

  // However its timing comes out: the re-export was asked for, and the
  // search added nothing a gate could reject.
  FixedGraphTimes slower(1.0, 1.5);
  auto slow = OptimizeOnnx(input, {}, slower, reexport);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->report.measurement, MeasureVerdict::kKeptReexport) << slow->report.measurement_detail;
  EXPECT_EQ(slow->model, exported->model);
  EXPECT_NE(slow->report.measurement_detail.find("0.667x"), std::string::npos) << slow->report.measurement_detail;
}

// The real thing: the embedded cpu profiler runs both graphs on oneDNN.
TEST(NeverSlowerTest, EmbeddedCpuMeasuresBothGraphs) {
  profiler::ProfilerOptions cpu;
  cpu.enable_cuda = false;
  cpu.default_backend = profiler::BACKEND_CPU;
  cpu.cpu.threads = 1;
  // Enough runs that the fused convolutions' gain (microseconds on this tiny
  // model) is not lost in noise: with 4 the search once found nothing to keep.
  cpu.timing.repetitions = 32;
  cpu.timing.min_timed_ms = 5;
  auto client = profiler::OpenProfiler("", cpu);
  ASSERT_TRUE(client.ok()) << client.status();
  OptimizerOptions on_cpu = AnyGain();
  on_cpu.measure_backend = profiler::BACKEND_CPU;  // by default ONNX Runtime times cpu costs' results, if here
  auto result = OptimizeOnnx(ConvReluModel(), {}, **client, on_cpu);
  ASSERT_TRUE(result.ok()) << result.status();
  const OptimizeReport& r = result->report;
  EXPECT_TRUE(r.measurement == MeasureVerdict::kKeptCandidate || r.measurement == MeasureVerdict::kKeptBaseline)
      << r.measurement_detail;
  EXPECT_GT(r.measured_baseline_ms, 0);
  EXPECT_GT(r.measured_after_ms, 0);
  EXPECT_GT(r.measured_runs, 0);
  EXPECT_NE(r.measurement_detail.find("cpu:"), std::string::npos) << r.measurement_detail;
}

}  // namespace
}  // namespace taso::optimizer
