#include "profiler/weight_stream_probe.h"

#include "gtest/gtest.h"
#include "profiler/cpu/cache_size.h"
#include "costs/graph_cost_model.h"
#include "profiler/open_client.h"
#include "profiler/profiler.h"

namespace taso::profiler {
namespace {

std::vector<WeightRate> Curve(const std::vector<std::pair<double, double>>& points) {
  std::vector<WeightRate> rates;
  for (auto [f, ms] : points) rates.push_back(WeightRate{f, static_cast<int64_t>(f * 1e6), 1, ms});
  return rates;
}

TEST(FitWeightStreamingTest, FitsTheStepFromCacheToMemory) {
  // 0.01 ms/MB cached, 0.04 streaming, paid linearly from 0.5 to 1 of the cache.
  auto fit = FitWeightStreaming(1 << 20, Curve({{4, 0.04}, {0.25, 0.01}, {0.5, 0.01}, {0.625, 0.0175},
                                                {0.75, 0.025}, {0.875, 0.0325}, {1, 0.04}, {2, 0.04}}));
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->cached_ms_per_mb, 0.01);
  EXPECT_DOUBLE_EQ(fit->memory_ms_per_mb, 0.04);
  EXPECT_NEAR(fit->weight_stream_mb_ms, 0.03, 1e-12);
  EXPECT_EQ(fit->rates.front().fraction, 0.25);  // sorted
  const std::vector<std::pair<double, double>> want = {{0.25, 0},   {0.5, 0},  {0.625, 0.25}, {0.75, 0.5},
                                                        {0.875, 0.75}, {1, 1}, {2, 1},        {4, 1}};
  ASSERT_EQ(fit->spill.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_DOUBLE_EQ(fit->spill[i].first, want[i].first);
    EXPECT_NEAR(fit->spill[i].second, want[i].second, 1e-9) << "at " << want[i].first;
  }
}

TEST(FitWeightStreamingTest, TheSharePaidNeverFalls) {
  auto fit = FitWeightStreaming(1 << 20, Curve({{0.25, 0.01}, {0.5, 0.03}, {0.75, 0.02}, {2, 0.04}}));
  ASSERT_TRUE(fit.ok());
  ASSERT_EQ(fit->spill.size(), 4u);
  EXPECT_NEAR(fit->spill[1].second, 2.0 / 3, 1e-9);
  EXPECT_NEAR(fit->spill[2].second, 2.0 / 3, 1e-9);  // 1/3 measured: noise
}

TEST(FitWeightStreamingTest, NoSlowerStreamingChargesNothing) {
  auto fit = FitWeightStreaming(1 << 20, Curve({{0.25, 0.01}, {1, 0.0101}, {2, 0.0102}}));
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->weight_stream_mb_ms, 0);
  EXPECT_TRUE(fit->spill.empty());
}

TEST(FitWeightStreamingTest, NeedsBothEndsAndACache) {
  EXPECT_FALSE(FitWeightStreaming(1 << 20, Curve({{0.5, 0.01}, {2, 0.04}})).ok());
  EXPECT_FALSE(FitWeightStreaming(1 << 20, Curve({{0.25, 0.01}, {1, 0.04}})).ok());
  EXPECT_FALSE(FitWeightStreaming(0, Curve({{0.25, 0.01}, {2, 0.04}})).ok());
}

TEST(DefaultWeightFractionsTest, StopAtTwiceTheCacheWhereMoreWouldNotFit) {
  EXPECT_EQ(DefaultWeightFractions(int64_t{32} << 20).back(), 4);
  EXPECT_EQ(DefaultWeightFractions(int64_t{256} << 20).back(), 2);
  EXPECT_EQ(DefaultWeightFractions(int64_t{32} << 20).front(), 0.25);
}

TEST(WeightChainGraphTest, EveryMatmulReadsItsOwnWeight) {
  const Graph chain = WeightChainGraph(3);
  ASSERT_TRUE(chain.Validate().ok());
  EXPECT_EQ(WeightWorkingSetBytes(chain), 3 * 512 * 512 * 4);
}

// The real thing, small: the cpu backend runs chains as whole graphs
// (against a pretend 4 MiB cache so that the chains stay short).
TEST(ProbeWeightStreamingTest, MeasuresChainsOnTheCpuBackend) {
  ProfilerOptions options;
  auto profiler = CostProfiler::Create(options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto client = InProcessClient(std::move(*profiler));
  auto fit = ProbeWeightStreaming(*client, BACKEND_CPU, int64_t{4} << 20, {0.25, 1, 2}, /*min_runs=*/3);
  ASSERT_TRUE(fit.ok()) << fit.status();
  ASSERT_EQ(fit->rates.size(), 3u);
  EXPECT_EQ(fit->rates[0].matmuls, 1);
  EXPECT_EQ(fit->rates[2].matmuls, 8);
  for (const WeightRate& r : fit->rates) EXPECT_GT(r.ms_per_mb, 0);
  if (fit->weight_stream_mb_ms > 0) {
    ASSERT_EQ(fit->spill.size(), 3u);
    EXPECT_LE(fit->spill[0].second, fit->spill[2].second);
  }
  EXPECT_FALSE(ProbeWeightStreaming(*client, BACKEND_CPU, 0, {0.25, 2}, 3).ok());
}

}  // namespace
}  // namespace taso::profiler
