// A request's options reach the optimizer as set; what it leaves unset takes
// the defaults (a taso_optimizer's flags, or taso optimize's own), and the
// caps hold whatever it asks.
#include "optimizer/optimize_options.h"

#include "gtest/gtest.h"

namespace taso::optimizer {
namespace {

OptionDefaults ServerLike() {
  OptionDefaults defaults;
  defaults.options.set_search(SEARCH_EQSAT);
  defaults.options.set_time_limit_s(30);
  defaults.options.set_eqsat_backoff(EQSAT_BACKOFF_OFF);
  defaults.options.set_eqsat_match_limit(77);
  defaults.options.set_eqsat_ban_length(3);
  defaults.options.set_min_gain(0.2);
  defaults.max_time_limit = absl::Seconds(100);
  defaults.ilp_memory_mb = 123;
  defaults.max_check_bytes = 456;
  defaults.max_model_bytes = 789;
  defaults.measure_tolerance = 0.05;
  return defaults;
}

TEST(OptimizeOptionsTest, UnsetFieldsTakeTheDefaults) {
  auto options = ResolveOptimizeOptions(OptimizeOptions(), ServerLike());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->search, SearchKind::kEqsat);
  EXPECT_EQ(options->time_limit, absl::Seconds(30));
  EXPECT_FALSE(options->eqsat.backoff_scheduler);
  EXPECT_EQ(options->eqsat.max_matches_per_rule, 77);
  EXPECT_EQ(options->eqsat.backoff_ban_length, 3);
  EXPECT_DOUBLE_EQ(options->min_gain, 0.2);
  EXPECT_EQ(options->eqsat.ilp_memory_mb, 123);
  EXPECT_EQ(options->check.max_bytes, 456);
  EXPECT_EQ(options->import.max_model_bytes, 789);
  EXPECT_DOUBLE_EQ(options->measure_tolerance, 0.05);
  EXPECT_TRUE(options->measure);
}

TEST(OptimizeOptionsTest, SetFieldsWinAndCapsHold) {
  OptimizeOptions request;
  request.set_search(SEARCH_BACKTRACK);
  request.set_time_limit_s(1000);  // above the cap
  request.set_eqsat_backoff(EQSAT_BACKOFF_ON);
  request.set_eqsat_match_limit(5);
  request.set_eqsat_ban_length(9);
  request.set_eqsat_node_limit(20);
  request.set_min_gain(0);  // set, though zero: presence, not value, decides
  request.set_alpha(1.2);
  request.set_budget(int64_t{1} << 40);
  request.set_skip_measure(true);
  request.set_seed(7);
  request.set_cost_backend(profiler::BACKEND_ANALYTIC);
  request.add_input_shapes("x=2x3");
  request.set_target(EXPORT_TARGET_ORT);
  auto options = ResolveOptimizeOptions(request, ServerLike());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->search, SearchKind::kBacktrack);
  EXPECT_EQ(options->time_limit, absl::Seconds(100));
  EXPECT_TRUE(options->eqsat.backoff_scheduler);
  EXPECT_EQ(options->eqsat.max_matches_per_rule, 5);
  EXPECT_EQ(options->eqsat.backoff_ban_length, 9);
  EXPECT_EQ(options->eqsat.node_limit, 20);
  EXPECT_DOUBLE_EQ(options->min_gain, 0);
  EXPECT_DOUBLE_EQ(options->backtrack.alpha, 1.2);
  EXPECT_EQ(options->backtrack.budget, 1 << 30);
  EXPECT_FALSE(options->measure);
  EXPECT_EQ(options->check.seed, 7u);
  EXPECT_EQ(options->backend, profiler::BACKEND_ANALYTIC);
  ASSERT_EQ(options->import.input_shapes.count("x"), 1u);
  EXPECT_EQ(options->import.input_shapes.at("x"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(options->dialect, OnnxDialect::kOnnxRuntime);
  EXPECT_EQ(ResolveOptimizeOptions(OptimizeOptions(), ServerLike())->dialect, OnnxDialect::kStandard);
}

TEST(OptimizeOptionsTest, TheServerCanTurnNeverSlowerOffForEveryone) {
  OptionDefaults defaults = ServerLike();
  defaults.measure = false;
  auto options = ResolveOptimizeOptions(OptimizeOptions(), defaults);
  ASSERT_TRUE(options.ok());
  EXPECT_FALSE(options->measure);
}

TEST(OptimizeOptionsTest, BadValuesAreRefusedNamingTheField) {
  OptimizeOptions negative;
  negative.set_eqsat_match_limit(-1);
  auto refused = ResolveOptimizeOptions(negative, ServerLike());
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("eqsat_match_limit"), std::string::npos);

  OptimizeOptions gain;
  gain.set_min_gain(1);
  refused = ResolveOptimizeOptions(gain, ServerLike());
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("min_gain"), std::string::npos);

  OptimizeOptions shape;
  shape.add_input_shapes("x=2xbanana");
  EXPECT_EQ(ResolveOptimizeOptions(shape, ServerLike()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OptimizeOptionsTest, EmptyDefaultsAreTheOptimizersOwn) {
  auto options = ResolveOptimizeOptions(OptimizeOptions(), OptionDefaults());
  ASSERT_TRUE(options.ok());
  const OptimizerOptions own;
  EXPECT_EQ(options->search, own.search);
  EXPECT_EQ(options->time_limit, own.time_limit);
  EXPECT_EQ(options->eqsat.max_matches_per_rule, own.eqsat.max_matches_per_rule);
  EXPECT_EQ(options->eqsat.backoff_scheduler, own.eqsat.backoff_scheduler);
  EXPECT_EQ(options->eqsat.node_limit, own.eqsat.node_limit);
  EXPECT_DOUBLE_EQ(options->min_gain, own.min_gain);
}

}  // namespace
}  // namespace taso::optimizer
