// The calibration loads from the embedded default and from files, refuses
// what would make costs meaningless, and its id changes with its data (so
// the cpu device identity, and with it the cost cache key, does too).
#include "profiler/cpu/calibration.h"

#include <fstream>

#include "gtest/gtest.h"
#include "profiler/cpu/cache_size.h"
#include "costs/graph_cost_model.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

TEST(CalibrationTest, EmbeddedDefaultLoads) {
  auto model = LoadCalibration("");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->calibration_id().rfind("cpu_default@", 0), 0u) << model->calibration_id();
  EXPECT_GE(model->per_node_ms(), 0);
  EXPECT_GE(model->per_mb_ms(), 0);
}

TEST(CalibrationTest, IdFollowsTheData) {
  auto a = ParseCalibration(R"({"name": "x", "per_node_ms": 0.01, "per_mb_ms": 0.02})", "a");
  auto b = ParseCalibration(R"({"name": "x", "per_node_ms": 0.011, "per_mb_ms": 0.02})", "b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->per_node_ms(), 0.01);
  EXPECT_DOUBLE_EQ(a->per_mb_ms(), 0.02);
  EXPECT_NE(a->calibration_id(), b->calibration_id());
  EXPECT_EQ(a->calibration_id().rfind("x@", 0), 0u);
}

TEST(CalibrationTest, BadDataIsAnErrorNamingTheProblem) {
  for (const char* text : {"not json", R"({"name": "x", "per_node_ms": -1, "per_mb_ms": 0})",
                           R"({"name": "x", "per_mb_ms": 0})", R"({"per_node_ms": 0, "per_mb_ms": 0})"}) {
    auto model = ParseCalibration(text, "cal.json");
    ASSERT_FALSE(model.ok()) << text;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(model.status().message().find("cal.json"), std::string::npos) << model.status();
  }
  EXPECT_FALSE(LoadCalibration("/nonexistent/calibration.json").ok());
}

TEST(CalibrationTest, NoneAndFiles) {
  auto none = LoadCalibration("none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->per_node_ms(), 0);
  EXPECT_EQ(none->calibration_id(), "none");
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/cal.json";
  std::ofstream(path) << R"({"name": "mine", "per_node_ms": 0.5, "per_mb_ms": 0.25, "fit": {"models": 3}})";
  auto file = LoadCalibration(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_DOUBLE_EQ(file->per_node_ms(), 0.5);
}

TEST(GraphCostModelTest, OnlyOperatorsThatRunAKernelPayTheOverheads) {
  GraphCostModel m;
  m.set_per_node_ms(0.5);
  m.set_per_mb_ms(2);
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, 1.0, 1'000'000), 1.0 + 0.5 + 2.0);
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, 0.0, 1'000'000), 0.0);  // a view or a load-time constant
  EXPECT_EQ(DescribeGraphCostModel(GraphCostModel()), "sum of kernel times");
}

TEST(GraphCostModelTest, SplitsAndTransposesCostACopyWhereTheRuntimeMaterialisesThem) {
  GraphCostModel m;
  m.set_per_node_ms(0.5);
  m.set_per_mb_ms(2);
  // Views stay free while the model does not say the runtime copies them.
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, OpKind::kSplit, 0.0, 1'000'000), 0.0);
  m.set_materialized_view_mb_ms(4);
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, OpKind::kSplit, 0.0, 1'000'000), 0.5 + 4.0);
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, OpKind::kTranspose, 0.0, 2'000'000), 0.5 + 8.0);
  // A reshape (an alias in every runtime) and a load-time constant stay free.
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, OpKind::kReshape, 0.0, 1'000'000), 0.0);
  // A transpose that runs a kernel (a shuffle) is charged as any kernel.
  EXPECT_DOUBLE_EQ(OperatorGraphMs(m, OpKind::kTranspose, 1.0, 1'000'000), 1.0 + 0.5 + 2.0);
  EXPECT_NE(DescribeGraphCostModel(m).find("per split or transpose copied"), std::string::npos);
}

TEST(CalibrationTest, TheViewCopyRateIsOptionalAndChecked) {
  auto without = ParseCalibration(R"({"name": "x", "per_node_ms": 0, "per_mb_ms": 0})", "a");
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->materialized_view_mb_ms(), 0);
  auto with = ParseCalibration(R"({"name": "x", "per_node_ms": 0, "per_mb_ms": 0, "materialized_view_mb_ms": 0.07})",
                               "b");
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_DOUBLE_EQ(with->materialized_view_mb_ms(), 0.07);
  auto bad = ParseCalibration(R"({"name": "x", "per_node_ms": 0, "per_mb_ms": 0, "materialized_view_mb_ms": -1})",
                              "c");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("materialized_view_mb_ms"), std::string::npos);
}


TEST(CalibrationTest, WeightTermsAreReadPerBackend) {
  const std::string text = R"({"name": "x", "per_node_ms": 0.1, "per_mb_ms": 0.2,
      "weights": {"stream_mb_ms": 0.03, "spill": [[0.25, 0], [1, 0.8], [2, 1]]},
      "ort_weights": {"stream_mb_ms": 0.015, "spill": [[0.5, 0], [1.5, 1]]}})";
  auto cpu = ParseCalibration(text, "a");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_DOUBLE_EQ(cpu->per_node_ms(), 0.1);
  EXPECT_DOUBLE_EQ(cpu->weight_stream_mb_ms(), 0.03);
  ASSERT_EQ(cpu->weight_spill_fraction_size(), 3);
  EXPECT_DOUBLE_EQ(cpu->weight_spill_paid(1), 0.8);
  auto ort = ParseCalibration(text, "a", CalibratedBackend::kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  // ORT's operator times include what it pays between kernels: no such terms.
  EXPECT_EQ(ort->per_node_ms(), 0);
  EXPECT_EQ(ort->per_mb_ms(), 0);
  EXPECT_DOUBLE_EQ(ort->weight_stream_mb_ms(), 0.015);
  ASSERT_EQ(ort->weight_spill_fraction_size(), 2);
  EXPECT_EQ(ort->calibration_id(), cpu->calibration_id());
  // Without the keys, no term.
  auto plain = ParseCalibration(R"({"name": "x", "per_node_ms": 0, "per_mb_ms": 0})", "b", CalibratedBackend::kOrt);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->weight_stream_mb_ms(), 0);
}

TEST(CalibrationTest, BadWeightTermsAreErrorsForEitherBackend) {
  for (const char* weights : {R"("weights": 3)", R"("weights": {"spill": [[0.5, 0]]})",
                              R"("weights": {"stream_mb_ms": -1, "spill": [[0.5, 0]]})",
                              R"("weights": {"stream_mb_ms": 0.1, "spill": []})",
                              R"("weights": {"stream_mb_ms": 0.1, "spill": [[1, 0], [0.5, 1]]})",
                              R"("ort_weights": {"stream_mb_ms": 0.1, "spill": [[1, 1.5]]})",
                              R"("ort_weights": {"stream_mb_ms": 0.1, "spill": [[1]]})"}) {
    const std::string text = std::string(R"({"name": "x", "per_node_ms": 0, "per_mb_ms": 0, )") + weights + "}";
    for (CalibratedBackend backend : {CalibratedBackend::kCpu, CalibratedBackend::kOrt}) {
      auto model = ParseCalibration(text, "cal.json", backend);
      ASSERT_FALSE(model.ok()) << text;
      EXPECT_NE(model.status().message().find("weights\""), std::string::npos) << model.status();
    }
  }
}

TEST(CalibrationTest, TheEmbeddedDefaultHasBothWeightTermsOnThisMachinesCache) {
  for (CalibratedBackend backend : {CalibratedBackend::kCpu, CalibratedBackend::kOrt}) {
    auto model = LoadCalibration("", backend);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_GT(model->weight_stream_mb_ms(), 0);
    EXPECT_GT(model->weight_spill_fraction_size(), 1);
    EXPECT_EQ(model->weight_cache_bytes(), LastLevelCacheBytes());
  }
  EXPECT_EQ(LoadCalibration("none", CalibratedBackend::kOrt)->weight_stream_mb_ms(), 0);
}

TEST(GraphCostModelTest, WeightWorkingSetCountsWhatRunTimeOperatorsRead) {
  using testing::F32;
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, 4}));
  TensorRef w1 = g.AddWeight("w1", F32({4, 4}));  // 64 bytes
  TensorRef w2 = g.AddWeight("w2", F32({4, 4}));
  TensorRef unused = g.AddWeight("unused", F32({4, 100}));
  OpParams concat;
  concat.axis = 1;
  // Folded when the model loads: the runtime reads the 128-byte result, and
  // w1 again where a matmul reads it directly.
  TensorRef both = (*g.AddOp(OpKind::kConcat, concat, {w1, w2}))[0];
  TensorRef a = (*g.AddOp(OpKind::kMatMul, OpParams{}, {x, both}))[0];
  TensorRef b = (*g.AddOp(OpKind::kMatMul, OpParams{}, {x, w1}))[0];
  TensorRef c = (*g.AddOp(OpKind::kMatMul, OpParams{}, {b, w1}))[0];  // w1 once
  // A second concatenation of the same weights (a search merging each step
  // of a cell in turn leaves one per step) is the same folded tensor.
  TensorRef again = (*g.AddOp(OpKind::kConcat, concat, {w1, w2}))[0];
  TensorRef d = (*g.AddOp(OpKind::kMatMul, OpParams{}, {x, again}))[0];
  g.AddOutput("a", a);
  g.AddOutput("c", c);
  g.AddOutput("d", d);
  g.AddOutput("u", unused);
  ASSERT_TRUE(g.Validate().ok());
  EXPECT_EQ(WeightWorkingSetBytes(g), 128 + 64);
  // Another weight of the same shape is another tensor.
  TensorRef w3 = g.AddWeight("w3", F32({4, 4}));
  g.AddOutput("e", (*g.AddOp(OpKind::kMatMul, OpParams{}, {x, w3}))[0]);
  EXPECT_EQ(WeightWorkingSetBytes(g), 128 + 64 + 64);
}

TEST(GraphCostModelTest, WeightsPayTheSharePaidAtTheirFractionOfTheCache) {
  GraphCostModel m;
  EXPECT_EQ(WeightStreamMs(m, 1'000'000), 0);  // no term
  m.set_weight_stream_mb_ms(0.02);
  m.set_weight_cache_bytes(10'000'000);
  for (auto [fraction, paid] : std::vector<std::pair<double, double>>{{0.5, 0}, {1, 0.5}, {2, 1}}) {
    m.add_weight_spill_fraction(fraction);
    m.add_weight_spill_paid(paid);
  }
  EXPECT_DOUBLE_EQ(WeightStreamMs(m, 2'000'000), 0);          // below the first point
  EXPECT_DOUBLE_EQ(WeightStreamMs(m, 5'000'000), 0);
  EXPECT_NEAR(WeightStreamMs(m, 7'500'000), 0.02 * 7.5 * 0.25, 1e-12);  // halfway to 0.5
  EXPECT_NEAR(WeightStreamMs(m, 15'000'000), 0.02 * 15 * 0.75, 1e-12);
  EXPECT_NEAR(WeightStreamMs(m, 40'000'000), 0.02 * 40, 1e-12);         // past the last point
  EXPECT_NE(DescribeGraphCostModel(m).find("of weights"), std::string::npos);
  m.set_weight_cache_bytes(0);  // the machine did not say: no term
  EXPECT_EQ(WeightStreamMs(m, 40'000'000), 0);
}

}  // namespace
}  // namespace taso::profiler
