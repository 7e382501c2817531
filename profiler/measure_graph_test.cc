// MeasureGraph in the profiler library, on the real oneDNN backend: the
// cache rules (a single graph is answered from the cache, bypass re-measures,
// an interleaved comparison is measured and stored), the limits, and what
// backends that cannot run whole graphs say.
#include <algorithm>
#include <filesystem>

#include "core/graph_proto.h"
#include "gtest/gtest.h"
#include "profiler/profiler.h"
#include "costs/timing.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"

namespace taso::profiler {
namespace {

using ::taso::testing::ConvParams;
using ::taso::testing::GraphBuilder;

Graph ConvRelu(int64_t channels) {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, channels, 8, 8});
  TensorRef c = b.Op(OpKind::kConv2D, {x, b.W("w", {channels, channels, 3, 3})},
                     ConvParams(1, Padding::kSame, Activation::kRelu));
  b.Out(b.Op(OpKind::kRelu, {b.Op(OpKind::kEwAdd, {c, x})}));
  return b.graph;
}

ProfilerOptions Options() {
  ProfilerOptions o;
  o.enable_cuda = false;
  o.cpu.threads = 2;
  o.timing.repetitions = 4;
  o.timing.min_timed_ms = 1;
  o.graph_timing.runs = 4;
  o.graph_timing.min_timed_ms = 1;
  return o;
}

MeasureGraphRequest Request(const std::vector<Graph>& graphs, Backend backend = BACKEND_CPU) {
  MeasureGraphRequest r;
  for (const Graph& g : graphs) *r.add_graphs() = GraphToProto(g, /*weight_data=*/false);
  r.set_backend(backend);
  return r;
}

TEST(MeasureGraphTest, SingleGraphIsCachedAndBypassMeasuresAgain) {
  auto profiler = CostProfiler::Create(Options());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  const Graph g = ConvRelu(8);
  auto first = (*profiler)->MeasureGraph(Request({g}));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->results(0).has_measurement()) << first->results(0).error().message();
  const GraphMeasurement& m = first->results(0).measurement();
  EXPECT_FALSE(first->interleaved());
  EXPECT_FALSE(m.from_cache());
  EXPECT_GT(m.median_ms(), 0);
  EXPECT_GE(m.runs(), 4);
  EXPECT_GT(m.operator_sum_ms(), 0);
  EXPECT_EQ(m.kernels(), 3);
  EXPECT_EQ(m.opaque_skipped(), 0);
  EXPECT_EQ(m.backend(), BACKEND_CPU);
  EXPECT_FALSE(m.graph_key().empty());
  const int64_t measurements = (*profiler)->counters().measurements;

  auto second = (*profiler)->MeasureGraph(Request({g}));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE(second->results(0).has_measurement());
  EXPECT_TRUE(second->results(0).measurement().from_cache());
  EXPECT_EQ(second->results(0).measurement().median_ms(), m.median_ms());
  EXPECT_EQ((*profiler)->counters().measurements, measurements) << "a cache hit measured";

  MeasureGraphRequest bypass = Request({g});
  bypass.set_bypass_cache(true);
  auto third = (*profiler)->MeasureGraph(bypass);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_FALSE(third->results(0).measurement().from_cache());
  EXPECT_GT((*profiler)->counters().measurements, measurements);

  // invalidate --all drops graph entries too.
  InvalidateCacheRequest all;
  all.set_all(true);
  auto removed = (*profiler)->InvalidateCache(all);
  ASSERT_TRUE(removed.ok()) << removed.status();
  auto after = (*profiler)->MeasureGraph(Request({g}));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_FALSE(after->results(0).measurement().from_cache());
}

TEST(MeasureGraphTest, InterleavedComparisonIsMeasuredAndStored) {
  auto profiler = CostProfiler::Create(Options());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  const Graph a = ConvRelu(8), b = ConvRelu(16);
  auto single = (*profiler)->MeasureGraph(Request({a}));
  ASSERT_TRUE(single.ok()) << single.status();
  auto both = (*profiler)->MeasureGraph(Request({a, b}));
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(both->interleaved());
  ASSERT_EQ(both->results_size(), 2);
  for (const GraphMeasureResult& r : both->results()) {
    ASSERT_TRUE(r.has_measurement()) << r.error().message();
    EXPECT_FALSE(r.measurement().from_cache()) << "a comparison must be measured in one run";
    EXPECT_GT(r.measurement().median_ms(), 0);
    // Four passes, alternating the creation order, each with its own median,
    // so a comparison can take the ratio per pass (optimizer's never slower).
    ASSERT_EQ(r.measurement().pass_median_ms_size(), GraphTimingPasses(2));
    ASSERT_EQ(GraphTimingPasses(2), 4);
    for (double ms : r.measurement().pass_median_ms()) EXPECT_GT(ms, 0);
    const auto& passes = r.measurement().pass_median_ms();
    EXPECT_GE(r.measurement().median_ms(), *std::min_element(passes.begin(), passes.end()));
    EXPECT_LE(r.measurement().median_ms(), *std::max_element(passes.begin(), passes.end()));
  }
  EXPECT_EQ(single->results(0).measurement().pass_median_ms_size(), 1) << "a lone graph: one pass";
  EXPECT_NE(both->results(0).measurement().graph_key(), both->results(1).measurement().graph_key());
  auto b_alone = (*profiler)->MeasureGraph(Request({b}));
  ASSERT_TRUE(b_alone.ok()) << b_alone.status();
  EXPECT_TRUE(b_alone->results(0).measurement().from_cache()) << "the comparison's result was not stored";
}

// A matmul whose output is split and transposed (strides only): views that
// ONNX Runtime runs as copies.
Graph SplitAndTranspose() {
  GraphBuilder b;
  TensorRef mm = b.Op(OpKind::kMatMul, {b.In("x", {4, 16}), b.W("w", {16, 32})});
  OpParams split = testing::Axis(1);
  split.sizes = {12, 20};
  std::vector<TensorRef> parts = b.OpN(OpKind::kSplit, {mm}, split);
  b.Out(b.Op(OpKind::kTanh, {parts[0]})).Out(b.Op(OpKind::kRelu, {parts[1]}));
  b.Out(b.Op(OpKind::kRelu, {b.Op(OpKind::kTranspose, {mm}, testing::Perm({1, 0}, /*shuffle=*/false))}));
  return b.graph;
}

TEST(MeasureGraphTest, ViewPolicyIsHonouredAndCachedApart) {
  auto profiler = CostProfiler::Create(Options());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  const Graph g = SplitAndTranspose();
  // The default is to copy views, as the runtime users run does.
  auto copy = (*profiler)->MeasureGraph(Request({g}));
  ASSERT_TRUE(copy.ok()) << copy.status();
  ASSERT_TRUE(copy->results(0).has_measurement()) << copy->results(0).error().message();
  EXPECT_EQ(copy->results(0).measurement().views_materialized(), 2);
  EXPECT_EQ(copy->results(0).measurement().views(), GRAPH_VIEW_POLICY_MATERIALIZE);
  EXPECT_FALSE(copy->results(0).measurement().from_cache());

  // The cached copy figure is not an answer for aliasing views.
  MeasureGraphRequest alias_request = Request({g});
  alias_request.set_views(GRAPH_VIEW_POLICY_ALIAS);
  auto alias = (*profiler)->MeasureGraph(alias_request);
  ASSERT_TRUE(alias.ok()) << alias.status();
  ASSERT_TRUE(alias->results(0).has_measurement()) << alias->results(0).error().message();
  EXPECT_FALSE(alias->results(0).measurement().from_cache());
  EXPECT_EQ(alias->results(0).measurement().views_materialized(), 0);
  EXPECT_EQ(alias->results(0).measurement().views(), GRAPH_VIEW_POLICY_ALIAS);
  EXPECT_NE(alias->results(0).measurement().graph_key(), copy->results(0).measurement().graph_key());

  // Each policy is then answered from its own entry.
  auto alias_again = (*profiler)->MeasureGraph(alias_request);
  ASSERT_TRUE(alias_again.ok()) << alias_again.status();
  EXPECT_TRUE(alias_again->results(0).measurement().from_cache());
  EXPECT_EQ(alias_again->results(0).measurement().views_materialized(), 0);
  auto copy_again = (*profiler)->MeasureGraph(Request({g}));
  ASSERT_TRUE(copy_again.ok()) << copy_again.status();
  EXPECT_TRUE(copy_again->results(0).measurement().from_cache());
  EXPECT_EQ(copy_again->results(0).measurement().views_materialized(), 2);

  MeasureGraphRequest bad = Request({g});
  bad.set_views(static_cast<GraphViewPolicy>(7));
  auto refused = (*profiler)->MeasureGraph(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
}

TEST(MeasureGraphTest, LimitsAndBadGraphsFailAlone) {
  ProfilerOptions o = Options();
  o.max_graph_nodes = 4;
  o.max_graph_tensor_bytes = 1 << 20;
  auto profiler = CostProfiler::Create(o);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  GraphBuilder big;
  TensorRef x = big.In("x", {1024, 1024});  // 4 MiB
  big.Out(big.Op(OpKind::kRelu, {x}));
  GraphBuilder small;
  small.Out(small.Op(OpKind::kRelu, {small.In("x", {4, 4})}));
  MeasureGraphRequest r = Request({ConvRelu(4), big.graph, small.graph});
  r.add_graphs()->add_nodes()->set_kind(ir::OP_RELU);  // a relu without inputs
  auto response = (*profiler)->MeasureGraph(r);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->results_size(), 4);
  EXPECT_EQ(response->results(0).error().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(response->results(0).error().message().find("--max_graph_nodes"), std::string::npos);
  EXPECT_EQ(response->results(1).error().code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_NE(response->results(1).error().message().find("--max_graph_tensor_mb"), std::string::npos);
  EXPECT_TRUE(response->results(2).has_measurement()) << response->results(2).error().message();
  EXPECT_EQ(response->results(3).error().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));

  auto empty = (*profiler)->MeasureGraph(MeasureGraphRequest());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MeasureGraphTest, AnalyticBackendCannotRunGraphs) {
  auto profiler = CostProfiler::Create(Options());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto response = (*profiler)->MeasureGraph(Request({ConvRelu(4)}, BACKEND_ANALYTIC));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnimplemented) << response.status();
  EXPECT_NE(response.status().message().find("whole graphs"), std::string::npos) << response.status();
}

TEST(MeasureGraphTest, CancelledSaysSo) {
  auto profiler = CostProfiler::Create(Options());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto response = (*profiler)->MeasureGraph(Request({ConvRelu(4)}), [] { return true; });
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled) << response.status();
}

}  // namespace
}  // namespace taso::profiler
