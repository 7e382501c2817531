// One time limit for the whole eqsat search: exploration takes at most its
// share, the ILP what is left if that is enough, greedy's program otherwise;
// and what the ILP proved (outcome, incumbent, bound, gap) is reported.
// Deterministic: no assertion depends on how long anything took.
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using testing::BothWays;
using testing::ExpectEquivalent;
using testing::SharedInputMatMulHost;
using testing::SharedInputMatMuls;

class EqsatBudgetTest : public testing::AnalyticProfilerTest {};

TEST_F(EqsatBudgetTest, ATinyTimeLimitReturnsGreedysProgramAndSaysSo) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  EqsatOptions options;
  options.time_limit = absl::Milliseconds(1);  // below the ILP's floor of 0.5 s
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.ilp, IlpVerdict::kNoResult);
  EXPECT_EQ(result->report.extraction, ExtractionOutcome::kGreedyIlpFailed);
  EXPECT_TRUE(absl::StartsWith(result->report.extraction_detail, "greedy (ilp not run: "))
      << result->report.extraction_detail;
  EXPECT_EQ(result->report.ilp_time_limit, absl::ZeroDuration());
  EXPECT_LE(result->report.best_cost_ms, result->report.initial_cost_ms);
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatBudgetTest, ExplorationGetsItsShareOfTheTimeLimit) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  EqsatOptions options;
  options.exploration_share = 0;  // none: the e-graph stays the input's
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.stop_reason, SearchStop::kTimeLimit);
  EXPECT_EQ(result->report.stop_detail, "time limit 0");
  EXPECT_EQ(result->iterations, 0);
  // The rest of the minute went to extraction, which proved its choice.
  EXPECT_EQ(result->report.ilp, IlpVerdict::kOptimal);
  EXPECT_GT(result->report.ilp_time_limit, absl::Seconds(50));
  ExpectEquivalent(host, result->best);
}

TEST_F(EqsatBudgetTest, AnOptimalIlpReportsItsBoundEqualToItsIncumbent) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->report.ilp, IlpVerdict::kOptimal) << result->report.extraction_detail;
  EXPECT_GT(result->report.ilp_incumbent_ms, 0);
  EXPECT_EQ(result->report.ilp_bound_ms, result->report.ilp_incumbent_ms);
  EXPECT_EQ(result->report.ilp_gap, 0);
  EXPECT_GT(result->report.ilp_time_limit, absl::ZeroDuration());
}

TEST_F(EqsatBudgetTest, WithoutTheIlpThereIsNoIlpVerdict) {
  const Graph host = SharedInputMatMulHost();
  CostModel cost(client_.get());
  EqsatOptions options;
  options.use_ilp = false;
  auto result = EqsatSearch(host, BothWays(SharedInputMatMuls()), cost, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->report.ilp, IlpVerdict::kNotApplicable);
  EXPECT_EQ(result->report.extraction, ExtractionOutcome::kGreedy);
}

}  // namespace
}  // namespace taso::optimizer
