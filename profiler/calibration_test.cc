// The calibration loads from the embedded default and from files, refuses
// what would make costs meaningless, and its id changes with its data (so
// the cpu device identity, and with it the cost cache key, does too).
#include "profiler/calibration.h"

#include <fstream>

#include "gtest/gtest.h"
#include "profiler/graph_cost_model.h"

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

}  // namespace
}  // namespace taso::profiler
