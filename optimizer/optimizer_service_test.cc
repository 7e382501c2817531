// The eqsat scheduling options a request sets reach the search; the ones it
// leaves unset take the server's defaults (taso_optimizer --eqsat_*).
#include "optimizer/optimizer_service.h"

#include "gtest/gtest.h"

namespace taso::optimizer {
namespace {

TEST(OptimizerServiceTest, EqsatSchedulingFromTheRequestOrTheServerDefaults) {
  ServiceLimits limits;
  limits.default_eqsat_backoff = false;
  limits.default_eqsat_match_limit = 77;
  limits.default_eqsat_ban_length = 3;
  const EqsatOptions defaults = EqsatOptionsFor(OptimizeOptions(), limits);
  EXPECT_FALSE(defaults.backoff_scheduler);
  EXPECT_EQ(defaults.max_matches_per_rule, 77);
  EXPECT_EQ(defaults.backoff_ban_length, 3);

  OptimizeOptions request;
  request.set_eqsat_backoff(EQSAT_BACKOFF_ON);
  request.set_eqsat_match_limit(5);
  request.set_eqsat_ban_length(9);
  const EqsatOptions asked = EqsatOptionsFor(request, limits);
  EXPECT_TRUE(asked.backoff_scheduler);
  EXPECT_EQ(asked.max_matches_per_rule, 5);
  EXPECT_EQ(asked.backoff_ban_length, 9);

  request.set_eqsat_backoff(EQSAT_BACKOFF_OFF);
  limits.default_eqsat_backoff = true;
  EXPECT_FALSE(EqsatOptionsFor(request, limits).backoff_scheduler);
}

}  // namespace
}  // namespace taso::optimizer
