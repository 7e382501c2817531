// The optimizer end to end in-process: ONNX in, search, check, ONNX out.
#include "optimizer/optimize.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "onnx_io/onnx_export.h"
#include "onnx_io/onnx_import.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "optimizer/report_proto.h"
#include "optimizer/rewrite/test_util.h"
#include "optimizer/optimize_test_models.h"
#include "profiler/open_client.h"

namespace taso::optimizer {
namespace {

using testing::AddNode;
using testing::AnyGain;
using testing::ConvReluModel;
using testing::Opset13Model;
using testing::ProjectionsModel;
using testing::Value;

class OptimizeTest : public testing::AnalyticProfilerTest {};

TEST_F(OptimizeTest, ACancelledCallStopsBothSearchesAndReturnsCancelled) {
  for (SearchKind search : {SearchKind::kBacktrack, SearchKind::kEqsat}) {
    OptimizerOptions options;
    options.search = search;
    options.time_limit = absl::Seconds(600);
    int polls = 0;
    options.cancelled = [&polls] { return ++polls > 0; };
    const absl::Time start = absl::Now();
    auto result = OptimizeOnnx(ConvReluModel(), {}, *client_, options);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled) << result.status();
    EXPECT_GT(polls, 0);
    EXPECT_LT(absl::Now() - start, absl::Seconds(60)) << "the search ignored the cancellation";
  }
}

// A few bytes of ONNX may declare an input of billions of elements: the
// model is refused, saying why, before anything allocates its tensors.
TEST_F(OptimizeTest, AModelDeclaringHugeTensorsIsRefusedBeforeAnyAllocation) {
  onnx::ModelProto m = Opset13Model("huge");
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_input() = Value("x", {100000, 100000});
  *g->add_output() = Value("y", {100000, 100000});
  AddNode(g, "Relu", {"x"}, "y");
  auto result = OptimizeOnnx(m.SerializeAsString(), {}, *client_, OptimizerOptions());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  EXPECT_NE(result.status().message().find("above the limit of 4096 MiB"), std::string::npos) << result.status();
}

TEST(RuleSetDigestTest, IsTheSha256OfTheSortedRuleIdsWithBothDirectionsCountedOnce) {
  RewriteRule a, a_back, b;
  a.name = "r01";
  a_back.name = "r01~";
  b.name = "r02";
  const std::string digest = RuleSetDigest({b, a, a_back});
  EXPECT_EQ(digest, RuleSetDigest({a, b}));
  EXPECT_EQ(digest.size(), 64u);
  // printf 'r01\nr02\n' | sha256sum
  EXPECT_EQ(digest, "0ba1e66bc9759158a25cb2902f982748b99c36f8d2a09fd7c6619298a2122c70");
  EXPECT_NE(digest, RuleSetDigest({a}));
}

TEST_F(OptimizeTest, FusesActivationsAndReturnsACheckedValidModel) {
  for (SearchKind search : {SearchKind::kBacktrack, SearchKind::kEqsat}) {
    OptimizerOptions options;
    options.min_gain = 0;  // the result fuses no more than the runtime baseline: still exported
    options.search = search;
    options.time_limit = absl::Seconds(20);
    auto result = OptimizeOnnx(ConvReluModel(), {}, *client_, options);
    ASSERT_TRUE(result.ok()) << result.status();
    const OptimizeReport& r = result->report;
    EXPECT_FALSE(r.returned_original) << r.error;
    EXPECT_TRUE(r.check.ran && r.check.equal) << r.check.reason;
    EXPECT_LT(r.cost_after_ms, r.cost_before_ms);
    EXPECT_LT(r.operators_after, r.operators_before);
    // Both relus fuse (the first once its bias add has, in the search or
    // after it), so two convolutions are left.
    int fusions = 0, bias_fusions = 0;
    for (const auto& [rule, count] : r.rules_applied) {
      if (rule.find("fuse:conv2d+bias[") == 0) bias_fusions += count;
      if (rule.find("fuse:conv2d+") == 0 && rule.find("relu") != std::string::npos) fusions += count;
    }
    EXPECT_EQ(fusions + bias_fusions + r.epilogues_fused, 3) << r.search;
    // The e-graph's size reaches the report (and the service's metrics).
    if (search == SearchKind::kEqsat) {
      EXPECT_GT(r.enodes, 0);
      EXPECT_GT(r.eclasses, 0);
      EXPECT_LE(r.eclasses, r.enodes);
      EXPECT_EQ(ReportToProto(r).enodes(), r.enodes);
    } else {
      EXPECT_EQ(r.enodes, 0);
    }
    EXPECT_EQ(r.operators_after, 2) << r.search;
    onnx::ModelProto out;
    ASSERT_TRUE(out.ParseFromString(result->model));
    EXPECT_NO_THROW(onnx::checker::check_model(out));
    int relus = 0, adds = 0;
    for (const auto& n : out.graph().node()) {
      relus += n.op_type() == "Relu";
      adds += n.op_type() == "Add";
      if (n.op_type() == "Conv" && n.input(0) == "x") {
        EXPECT_EQ(n.input_size(), 3) << "the bias is Conv's input";
      }
    }
    EXPECT_EQ(out.graph().input(0).name(), "x");
    EXPECT_EQ(out.graph().output(0).name(), "y");
    EXPECT_EQ(adds, 0);
    EXPECT_EQ(relus, 2);  // a fused conv exports as Conv + Relu: the fusion lives in the IR and the cost
  }
}

// relu(OUTER(x)) = OUTER(relu(x)) over a 4-D x, for a pooling OUTER: true,
// and never matching a model without a pool (or a rule that makes one).
rules::Rule ReluCommutesWith(OpKind pool) {
  auto side = [&](bool relu_first) {
    Graph g;
    TensorRef x = g.AddInput("x", testing::F32({1, 4, 8, 8}));
    OpParams p;
    p.kernel_h = p.kernel_w = 2;
    p.stride_h = p.stride_w = 2;
    p.padding = Padding::kValid;
    if (relu_first) x = *g.AddOp1(OpKind::kRelu, {}, {x});
    x = *g.AddOp1(pool, p, {x});
    if (!relu_first) x = *g.AddOp1(OpKind::kRelu, {}, {x});
    g.AddOutput("y", x);
    return g;
  };
  return testing::MakeRule(absl::StrCat("relu-", OpKindName(pool)), side(false), side(true));
}

TEST_F(OptimizeTest, RulesThatCouldNeverMatchAreLeftOutAndCounted) {
  // The model has convolutions and relus: no rule makes a pool out of them.
  std::vector<RewriteRule> rules = testing::BothWays(ReluCommutesWith(OpKind::kPoolMax));
  ASSERT_EQ(rules.size(), 2u);
  for (SearchKind search : {SearchKind::kBacktrack, SearchKind::kEqsat}) {
    OptimizerOptions options;
    options.min_gain = 0;
    options.search = search;
    options.time_limit = absl::Seconds(20);
    auto without = OptimizeOnnx(ConvReluModel(), {}, *client_, options);
    auto with = OptimizeOnnx(ConvReluModel(), rules, *client_, options);
    ASSERT_TRUE(without.ok() && with.ok());
    EXPECT_EQ(without->report.rules_unreachable, 0);
    EXPECT_EQ(with->report.rules_unreachable, 2) << "both directions name a pool";
    EXPECT_EQ(with->report.rules_available, without->report.rules_available);
    EXPECT_EQ(ReportToProto(with->report).rules_unreachable(), 2);
    EXPECT_EQ(with->model, without->model);
  }
}


TEST_F(OptimizeTest, MergedMatMulsAndFoldedTransposesExportAsValidOnnx) {
  for (SearchKind search : {SearchKind::kBacktrack, SearchKind::kEqsat}) {
    OptimizerOptions options;
    options.search = search;
    options.time_limit = absl::Seconds(20);
    auto result = OptimizeOnnx(ProjectionsModel(), {}, *client_, options);
    ASSERT_TRUE(result.ok()) << result.status();
    const OptimizeReport& r = result->report;
    EXPECT_FALSE(r.returned_original) << r.error;
    EXPECT_TRUE(r.check.ran && r.check.equal) << r.check.reason;
    EXPECT_EQ(r.cse_merged, 1);
    EXPECT_EQ(ReportToProto(r).cse_merged(), 1);
    onnx::ModelProto out;
    ASSERT_TRUE(out.ParseFromString(result->model));
    EXPECT_NO_THROW(onnx::checker::check_model(out));
    std::map<std::string, int> ops;
    for (const auto& n : out.graph().node()) ++ops[n.op_type()];
    // One MatMul over x's concatenated (folded) weights, split; one reading
    // a through a Transpose the runtime folds into it (MatMul's transA); one
    // reading the transposed weight, materialised as an initializer.
    EXPECT_EQ(ops["MatMul"], 3) << r.search;
    EXPECT_GE(ops["Split"], 1) << r.search;
    EXPECT_EQ(ops["Transpose"], 1) << r.search;
    EXPECT_EQ(ops["Relu"], 1) << r.search;
    EXPECT_EQ(ops["Concat"], 0) << "concatenated weights are folded into initializers";
  }
}

// Exporters with the kinds of fault export could have: each must give the
// input back, byte for byte, with a reason naming what went wrong.
TEST_F(OptimizeTest, TheCheckCatchesWhatExportBreaks) {
  // Writes the optimized graph, then computes something else with it.
  OnnxExporter relu_as_sigmoid = [](const OnnxModel& model, const Graph& graph,
                                    OnnxExternalSink* sink) -> absl::StatusOr<std::string> {
    auto bytes = ExportOnnx(model, graph, sink);
    if (!bytes.ok()) return bytes;
    onnx::ModelProto m;
    if (!m.ParseFromString(*bytes)) return absl::InternalError("unparsable export");
    for (onnx::NodeProto& n : *m.mutable_graph()->mutable_node()) {
      if (n.op_type() == "Relu") {
        n.set_op_type("Sigmoid");
        break;
      }
    }
    return m.SerializeAsString();
  };
  OnnxExporter garbage = [](const OnnxModel&, const Graph&, OnnxExternalSink*) -> absl::StatusOr<std::string> {
    return std::string("not an onnx model");
  };
  OnnxExporter failing = [](const OnnxModel&, const Graph&, OnnxExternalSink*) -> absl::StatusOr<std::string> {
    return absl::InternalError("checker says no");
  };
  const struct {
    const OnnxExporter* exporter;
    const char* error;
  } cases[] = {{&relu_as_sigmoid, "the exported model differs from the original"},
               {&garbage, "the exported model does not import"},
               {&failing, "exporting the optimized graph failed (checker says no)"}};
  const std::string input = ConvReluModel();
  for (const auto& c : cases) {
    OptimizerOptions options;
    options.time_limit = absl::Seconds(20);
    auto result = OptimizeOnnx(input, {}, *client_, options, *c.exporter);
    ASSERT_TRUE(result.ok()) << result.status();
    const OptimizeReport& r = result->report;
    EXPECT_TRUE(r.returned_original) << c.error;
    EXPECT_EQ(result->model, input) << c.error;
    EXPECT_NE(r.error.find(c.error), std::string::npos) << r.error;
    EXPECT_EQ(r.cost_after_ms, r.cost_baseline_ms) << "the input runs as the baseline";
    EXPECT_EQ(r.operators_after, r.operators_before);
  }
}

TEST_F(OptimizeTest, TheCheckSeedIsHonouredAndReported) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}}) {
    OptimizerOptions options;
    options.time_limit = absl::Seconds(20);
    options.check.seed = seed;
    auto result = OptimizeOnnx(ConvReluModel(), {}, *client_, options);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->report.check.ran && result->report.check.equal) << result->report.check.reason;
    const uint64_t used = seed == 0 ? kDefaultCheckSeed : seed;
    EXPECT_EQ(result->report.check.seed, used);
    EXPECT_EQ(ReportToProto(result->report).check_seed(), used);
  }
}

TEST_F(OptimizeTest, MalformedModelsAreInvalidArgument) {
  const std::string good = ConvReluModel();
  auto truncated = OptimizeOnnx(good.substr(0, good.size() / 2), {}, *client_, {});
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kInvalidArgument) << truncated.status();
  auto empty = OptimizeOnnx("", {}, *client_, {});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument) << empty.status();
}

// Options for tests of the never-slower mechanics on ConvReluModel, whose
// result is predicted no faster than its runtime baseline (bias and relu
// fused in both): any predicted gain is kept, so the result is measured.
TEST_F(OptimizeTest, AnalyticBackendCannotRunGraphsAndSaysSo) {
  auto result = OptimizeOnnx(ConvReluModel(), {}, *client_, AnyGain());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.measurement, MeasureVerdict::kSkippedBackendCannotRun);
  EXPECT_NE(result->report.measurement_detail.find("whole graphs"), std::string::npos)
      << result->report.measurement_detail;
}

// The wire report's stop reason is the search's alone: an e-graph that
// saturated stays CONVERGED when its ILP then ran out of time (the detail text
// mentions "time limit"), and the extraction's outcome is reported apart.
TEST(ReportToProtoTest, SaturatedWithIlpTimeLimitIsConvergedAndTimeLimitedExtraction) {
  OptimizeReport report;
  report.search = "eqsat";
  report.stop_reason = SearchStop::kSaturated;
  report.stop_detail = "saturated (3 iterations, 40 e-nodes, 20 e-classes, 5 rule applications); "
                       "extraction: ilp (time limit, best found)";
  report.extraction = ExtractionOutcome::kIlpTimeLimit;
  report.extraction_detail = "ilp (time limit, best found)";
  const Report out = ReportToProto(report);
  EXPECT_EQ(out.stop_reason(), STOP_REASON_CONVERGED);
  EXPECT_EQ(out.extraction(), EXTRACTION_ILP_TIME_LIMIT);
  EXPECT_EQ(out.stop_detail(), report.stop_detail);
  EXPECT_EQ(out.extraction_detail(), "ilp (time limit, best found)");
}

TEST(ReportToProtoTest, TheIlpGapAndThePhaseTimesReachTheWire) {
  OptimizeReport report;
  report.search = "eqsat";
  report.ilp = IlpVerdict::kStoppedWithGap;
  report.ilp_incumbent_ms = 2.0;
  report.ilp_bound_ms = 1.5;
  report.ilp_gap = 0.25;
  report.ilp_time_limit = absl::Milliseconds(7500);
  report.exploration_time = absl::Milliseconds(10000);
  report.costing_time = absl::Milliseconds(2000);
  report.extraction_time = absl::Milliseconds(7600);
  const Report out = ReportToProto(report);
  EXPECT_EQ(out.ilp_outcome(), ILP_STOPPED_WITH_GAP);
  EXPECT_EQ(out.ilp_incumbent_ms(), 2.0);
  EXPECT_EQ(out.ilp_bound_ms(), 1.5);
  EXPECT_EQ(out.ilp_gap(), 0.25);
  EXPECT_EQ(out.ilp_time_limit_ms(), 7500);
  EXPECT_EQ(out.exploration_ms(), 10000);
  EXPECT_EQ(out.costing_ms(), 2000);
  EXPECT_EQ(out.extraction_ms(), 7600);
  report.ilp = IlpVerdict::kNoResult;
  EXPECT_EQ(ReportToProto(report).ilp_outcome(), ILP_NO_RESULT);
  report.ilp = IlpVerdict::kOptimal;
  EXPECT_EQ(ReportToProto(report).ilp_outcome(), ILP_OPTIMAL);
  EXPECT_EQ(ReportToProto(OptimizeReport{}).ilp_outcome(), ILP_OUTCOME_UNSPECIFIED);
}

TEST(ReportToProtoTest, EachSearchStopMapsToItsProtoReason) {
  const std::pair<SearchStop, StopReason> cases[] = {
      {SearchStop::kQueueExhausted, STOP_REASON_CONVERGED}, {SearchStop::kSaturated, STOP_REASON_CONVERGED},
      {SearchStop::kBudget, STOP_REASON_BUDGET},            {SearchStop::kIterationLimit, STOP_REASON_BUDGET},
      {SearchStop::kNodeLimit, STOP_REASON_NODE_LIMIT},     {SearchStop::kTimeLimit, STOP_REASON_TIME_LIMIT},
  };
  for (const auto& [stop, want] : cases) {
    OptimizeReport report;
    report.stop_reason = stop;
    EXPECT_EQ(ReportToProto(report).stop_reason(), want);
    EXPECT_EQ(ReportToProto(report).extraction(), EXTRACTION_UNSPECIFIED);
  }
}

}  // namespace
}  // namespace taso::optimizer
