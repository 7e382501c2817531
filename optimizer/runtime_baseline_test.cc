// The honest baseline and the graph cost model: what a runtime does anyway is
// not claimed as a win, and a graph with fewer operators of equal kernel time
// costs less once dispatch and memory traffic are counted.
#include "optimizer/passes/runtime_baseline.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/passes/numeric_check.h"
#include "optimizer/optimize.h"
#include "optimizer/rewrite/test_util.h"
#include "profiler/open_client.h"
#include "profiler/profiler.h"

namespace taso::optimizer {
namespace {

using ::taso::testing::F32;

std::shared_ptr<const std::string> Data(const TensorType& t, float start, float step) {
  std::vector<float> v(t.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i % 5);
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// x -> conv -> + bias -> batchnorm -> relu, as PyTorch exports a conv block.
Graph ConvBiasBnRelu() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 8, 16, 16}));
  TensorRef y = *g.AddOp1(OpKind::kConv2D, {},
                          {x, g.AddWeight("w", F32({8, 8, 3, 3}), Data(F32({8, 8, 3, 3}), -0.2f, 0.1f))});
  y = *g.AddOp1(OpKind::kEwAdd, {}, {y, g.AddWeight("b", F32({8, 1, 1}), Data(F32({8, 1, 1}), 0.1f, 0.05f))});
  std::vector<TensorRef> bn = {y};
  const char* names[] = {"scale", "shift", "mean", "var"};
  for (int i = 0; i < 4; ++i) bn.push_back(g.AddWeight(names[i], F32({8}), Data(F32({8}), 0.5f + i, 0.25f)));
  OpParams p;
  p.epsilon = 1e-5f;
  y = *g.AddOp1(OpKind::kBatchNorm, p, bn);
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {y}));
  return g;
}

// x -> relu twice (as NASNet cells export it: each branch normalises the
// cell input itself) -> a convolution on each -> add.
Graph TwoBranchesWithDuplicateRelu() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 8, 16, 16}));
  TensorRef sum;
  for (int branch = 0; branch < 2; ++branch) {
    TensorRef r = *g.AddOp1(OpKind::kRelu, {}, {x});
    const std::string w = absl::StrCat("w", branch);
    TensorRef y = *g.AddOp1(OpKind::kConv2D, {},
                            {r, g.AddWeight(w, F32({8, 8, 1, 1}), Data(F32({8, 8, 1, 1}), -0.2f + branch, 0.1f))});
    sum = branch == 0 ? y : *g.AddOp1(OpKind::kEwAdd, {}, {sum, y});
  }
  g.AddOutput("y", sum);
  return g;
}

class RuntimeBaselineTest : public testing::AnalyticProfilerTest {};

TEST_F(RuntimeBaselineTest, IsOneFusedConvolutionThatCostsLessThanTheRawGraph) {
  const Graph raw = ConvBiasBnRelu();
  CostModel cost(client_.get());
  auto baseline = RuntimeBaseline(raw, cost);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_EQ(baseline->batchnorms_folded, 1);
  EXPECT_EQ(baseline->graph.num_ops(), 1);  // conv with bias and relu fused
  NumericCheck check = CompareGraphs(raw, baseline->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
  auto raw_cost = cost.GraphCost(raw), baseline_cost = cost.GraphCost(baseline->graph);
  ASSERT_TRUE(raw_cost.ok() && baseline_cost.ok());
  EXPECT_GT(*raw_cost, *baseline_cost);
}

TEST_F(RuntimeBaselineTest, MergesCommonSubexpressionsAsTheRuntimeDoes) {
  const Graph raw = TwoBranchesWithDuplicateRelu();
  CostModel cost(client_.get());
  auto baseline = RuntimeBaseline(raw, cost);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_EQ(baseline->cse_merged, 1);
  EXPECT_EQ(baseline->graph.num_ops(), raw.num_ops() - 1);
  NumericCheck check = CompareGraphs(raw, baseline->graph);
  EXPECT_TRUE(check.ran && check.equal) << check.reason;
  auto raw_cost = cost.GraphCost(raw), baseline_cost = cost.GraphCost(baseline->graph);
  ASSERT_TRUE(raw_cost.ok() && baseline_cost.ok());
  EXPECT_GT(*raw_cost, *baseline_cost);
  // So a search that only merges the two relus claims no speedup (the
  // structural rules would also merge the two convolutions: a real win).
  OptimizerOptions options;
  options.time_limit = absl::Seconds(20);
  options.structural_rules = false;
  auto result = OptimizeGraph(raw, /*rules=*/{}, *client_, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.cse_merged, 1);
  EXPECT_NEAR(result->report.cost_baseline_ms, result->report.cost_after_ms, 1e-9);
}

TEST_F(RuntimeBaselineTest, FusionAloneIsNoSpeedupOverTheBaseline) {
  for (SearchKind search : {SearchKind::kBacktrack, SearchKind::kEqsat}) {
    OptimizerOptions options;
    options.search = search;
    options.time_limit = absl::Seconds(20);
    auto result = OptimizeGraph(ConvBiasBnRelu(), /*rules=*/{}, *client_, options);
    ASSERT_TRUE(result.ok()) << result.status();
    const OptimizeReport& r = result->report;
    EXPECT_FALSE(r.returned_original) << r.error;
    EXPECT_GT(r.cost_raw_ms, r.cost_baseline_ms);
    EXPECT_EQ(r.cost_before_ms, r.cost_raw_ms);
    // The search fused what the runtime fuses: the same graph, the same cost.
    EXPECT_NEAR(r.cost_baseline_ms, r.cost_after_ms, 1e-9) << r.search;
    EXPECT_FALSE(r.cost_model.empty());
  }
}

// A stand-in device whose kernel times are fixed per operator, with the
// calibration a cpu backend would report.
class FixedTimesBackend : public profiler::MeasureBackend {
 public:
  explicit FixedTimesBackend(profiler::GraphCostModel model)
      : model_(std::move(model)), device_("fixed times; calibration " + model_.calibration_id()) {}
  profiler::Backend kind() const override { return profiler::BACKEND_CPU; }
  const std::string& device() const override { return device_; }
  profiler::GraphCostModel graph_cost_model() const override { return model_; }
  absl::StatusOr<profiler::Measurement> Measure(const profiler::CanonicalSignature& sig,
                                                const profiler::TimingOptions&) override {
    profiler::Measurement m;
    m.median_ms = m.mean_ms = m.min_ms = sig.op.kind == OpKind::kSigmoid ? 2.0 : 1.0;
    m.repetitions = 1;
    return m;
  }

 private:
  profiler::GraphCostModel model_;
  std::string device_;
};

std::unique_ptr<profiler::ProfilerClient> FixedTimesProfiler(profiler::GraphCostModel model) {
  std::vector<std::unique_ptr<profiler::MeasureBackend>> backends;
  backends.push_back(std::make_unique<FixedTimesBackend>(model));
  profiler::ProfilerOptions options;
  options.default_backend = profiler::BACKEND_CPU;
  auto p = profiler::CostProfiler::CreateWithBackends(options, std::move(backends), nullptr);
  EXPECT_TRUE(p.ok()) << p.status();
  return profiler::InProcessClient(std::move(*p));
}

std::unique_ptr<profiler::ProfilerClient> FixedTimesProfiler(double per_node_ms, double per_mb_ms) {
  profiler::GraphCostModel model;
  model.set_per_node_ms(per_node_ms);
  model.set_per_mb_ms(per_mb_ms);
  model.set_calibration_id("test");
  return FixedTimesProfiler(std::move(model));
}

// relu(tanh(x)) and sigmoid(x): 2 ms of kernels each, two operators against one.
Graph TwoOps() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 250000}));  // 1 MB
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {*g.AddOp1(OpKind::kTanh, {}, {x})}));
  return g;
}
Graph OneOp() {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 250000}));
  g.AddOutput("y", *g.AddOp1(OpKind::kSigmoid, {}, {x}));
  return g;
}

TEST(GraphCostModelTest, FewerOperatorsOfEqualKernelTimeCostLess) {
  auto plain = FixedTimesProfiler(0, 0);
  CostModel plain_cost(plain.get());
  EXPECT_DOUBLE_EQ(*plain_cost.GraphCost(TwoOps()), 2.0);
  EXPECT_DOUBLE_EQ(*plain_cost.GraphCost(OneOp()), 2.0);  // TASO's sum cannot tell them apart

  auto calibrated = FixedTimesProfiler(0.1, 0.5);
  CostModel cost(calibrated.get());
  // Each operator writes 1 MB.
  EXPECT_DOUBLE_EQ(*cost.GraphCost(TwoOps()), 2.0 + 2 * (0.1 + 0.5 * 1.0));
  EXPECT_DOUBLE_EQ(*cost.GraphCost(OneOp()), 2.0 + 0.1 + 0.5 * 1.0);
  EXPECT_EQ(cost.graph_cost_model().calibration_id(), "test");
  EXPECT_NE(cost.Describe().find("0.1000 ms/node"), std::string::npos) << cost.Describe();

  // What eqsat's extraction sums, operator by operator, is the same figure.
  std::vector<profiler::Signature> ops = {{OpKind::kTanh, {}, {F32({1, 250000})}},
                                          {OpKind::kRelu, {}, {F32({1, 250000})}}};
  auto each = cost.SignatureCosts(ops);
  ASSERT_TRUE(each.ok());
  EXPECT_DOUBLE_EQ((*each)[0] + (*each)[1], *cost.GraphCost(TwoOps()));
}

// x read by `steps` matmuls, each with its own [512,512] weight (1 MiB);
// with `merged` the first two read one [512,1024] concatenation of theirs
// (folded at load) while every other matmul still reads its own: the
// weights the graph reads grow by two.
Graph SharedInputMatmuls(int steps, bool merged) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 512}));
  std::vector<TensorRef> w;
  for (int i = 0; i < steps; ++i) w.push_back(g.AddWeight("w" + std::to_string(i), F32({512, 512})));
  for (int i = 0; i < steps; ++i) g.AddOutput("y" + std::to_string(i), *g.AddOp1(OpKind::kMatMul, {}, {x, w[i]}));
  if (merged) {
    OpParams concat;
    concat.axis = 1;
    TensorRef both = *g.AddOp1(OpKind::kConcat, concat, {w[0], w[1]});
    g.AddOutput("merged", *g.AddOp1(OpKind::kMatMul, {}, {x, both}));
  }
  return g;
}

TEST(GraphCostModelTest, AGraphPaysForWeightsThatOutgrowTheCache) {
  profiler::GraphCostModel model;
  model.set_calibration_id("test");
  model.set_weight_stream_mb_ms(0.5);
  model.set_weight_cache_bytes(int64_t{8} << 20);  // 8 MiB
  for (auto [fraction, paid] : std::vector<std::pair<double, double>>{{0.5, 0}, {1, 1}}) {
    model.add_weight_spill_fraction(fraction);
    model.add_weight_spill_paid(paid);
  }
  auto profiler = FixedTimesProfiler(model);
  CostModel cost(profiler.get());
  constexpr double kMiB = (1 << 20) / 1e6;
  // 4 MiB of weights: half the cache, nothing paid; 4 kernels of 1 ms.
  EXPECT_DOUBLE_EQ(*cost.GraphCost(SharedInputMatmuls(4, false)), 4.0);
  // 6 MiB, 0.75 of the cache: half of 0.5 ms/MB paid on all of them.
  EXPECT_NEAR(*cost.GraphCost(SharedInputMatmuls(4, true)), 5.0 + 0.5 * 6 * kMiB * 0.5, 1e-9);
  // Operator by operator (eqsat's sums) the term cannot be seen: it is the
  // whole graph's, which is why eqsat checks its extraction with GraphCost.
  auto each = cost.SignatureCosts({{OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 512})}}});
  ASSERT_TRUE(each.ok());
  EXPECT_DOUBLE_EQ((*each)[0], 1.0);
  EXPECT_NE(cost.Describe().find("of weights"), std::string::npos) << cost.Describe();
}

TEST(GraphCostModelTest, ViewsPayNoOverhead) {
  auto calibrated = FixedTimesProfiler(0.1, 0.5);
  CostModel cost(calibrated.get());
  // The backend gives every operator 1 ms, but a 0 ms answer (a view, a
  // load-time constant) would stay 0: checked on the formula directly.
  EXPECT_DOUBLE_EQ(profiler::OperatorGraphMs(cost.graph_cost_model(), 0, 1'000'000), 0);
  auto first = cost.SignatureCosts({});  // the model arrives even with nothing to measure
  ASSERT_TRUE(first.ok());
  EXPECT_DOUBLE_EQ(cost.graph_cost_model().per_node_ms(), 0.1);
}

}  // namespace
}  // namespace taso::optimizer
