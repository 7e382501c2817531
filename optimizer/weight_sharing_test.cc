// Optimizing an unrolled RNN whose steps share their weights must not store
// a merged weight once per step: at batch 1 the matmuls are bound by
// streaming their weights, and the suite's LSTM came back 4-8x larger and
// 3x slower in ONNX Runtime when each step got its own concatenation.
// Costs from the analytic backend in-process (deterministic).
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "optimizer/optimize.h"
#include "optimizer/rewrite/test_util.h"
#include "testing/tensor_types.h"

namespace taso::optimizer {
namespace {

using ::taso::testing::F32;

std::shared_ptr<const std::string> Values(int64_t n, int seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.05f * std::sin(0.37f * static_cast<float>(i) + static_cast<float>(seed));
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

int64_t WeightBytes(const Graph& g) {
  int64_t bytes = 0;
  for (const Node& n : g.nodes()) {
    if (n.kind == OpKind::kWeight && n.data) bytes += static_cast<int64_t>(n.data->size());
  }
  return bytes;
}

int Count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

constexpr int64_t kWidth = 64;

// `steps` LSTM steps (gates i, f, o, g = x_t Wx + h Wh) sharing 8 weights.
Graph UnrolledLstm(int steps) {
  Graph g;
  std::vector<TensorRef> wx, wh;
  for (int k = 0; k < 4; ++k) {
    wx.push_back(g.AddWeight(absl::StrCat("wx", k), F32({kWidth, kWidth}), Values(kWidth * kWidth, k)));
    wh.push_back(g.AddWeight(absl::StrCat("wh", k), F32({kWidth, kWidth}), Values(kWidth * kWidth, 10 + k)));
  }
  TensorRef h = g.AddInput("h0", F32({1, kWidth}));
  TensorRef c = g.AddInput("c0", F32({1, kWidth}));
  for (int s = 0; s < steps; ++s) {
    TensorRef x = g.AddInput(absl::StrCat("x", s), F32({1, kWidth}));
    std::vector<TensorRef> gate;
    for (int k = 0; k < 4; ++k) {
      TensorRef a = *g.AddOp1(OpKind::kMatMul, {}, {x, wx[k]});
      TensorRef b = *g.AddOp1(OpKind::kMatMul, {}, {h, wh[k]});
      TensorRef sum = *g.AddOp1(OpKind::kEwAdd, {}, {a, b});
      gate.push_back(*g.AddOp1(k == 3 ? OpKind::kTanh : OpKind::kSigmoid, {}, {sum}));
    }
    TensorRef fc = *g.AddOp1(OpKind::kEwMul, {}, {gate[1], c});
    TensorRef ig = *g.AddOp1(OpKind::kEwMul, {}, {gate[0], gate[3]});
    c = *g.AddOp1(OpKind::kEwAdd, {}, {fc, ig});
    h = *g.AddOp1(OpKind::kEwMul, {}, {gate[2], *g.AddOp1(OpKind::kTanh, {}, {c})});
  }
  g.AddOutput("h", h);
  g.AddOutput("c", c);
  return g;
}

class WeightSharingTest : public testing::AnalyticProfilerTest,
                          public ::testing::WithParamInterface<SearchKind> {};

TEST_P(WeightSharingTest, MergedWeightsAreStoredOnceForAllSteps) {
  constexpr int kSteps = 4;
  const Graph input = UnrolledLstm(kSteps);
  OptimizerOptions options;
  options.search = GetParam();
  options.time_limit = absl::Seconds(20);
  auto r = OptimizeGraph(input, {}, *client_, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->report.returned_original) << r->report.error;
  const Graph& out = r->graph;
  // The search must have merged something, or the bound below says nothing.
  ASSERT_LT(Count(out, OpKind::kMatMul), Count(input, OpKind::kMatMul)) << r->report.stop_detail;
  // At most the input's weights plus one merged copy of them: every step
  // reads the same merged x- and h-weights (or one merged [Wx; Wh]), so
  // 2 x the input's 8 matrices. One copy per step would be up to 5 x.
  const int64_t input_bytes = WeightBytes(input);
  EXPECT_EQ(input_bytes, 8 * kWidth * kWidth * 4);
  EXPECT_LE(WeightBytes(out), 2 * input_bytes)
      << "weights " << Count(out, OpKind::kWeight) << ", matmuls " << Count(out, OpKind::kMatMul);
  // And no two weights hold the same values.
  std::set<std::pair<std::string, std::string>> seen;
  for (const Node& n : out.nodes()) {
    if (n.kind != OpKind::kWeight || !n.data) continue;
    EXPECT_TRUE(seen.insert({n.output_types[0].ToString(), *n.data}).second) << n.name << " is a duplicate";
  }
  EXPECT_LE(r->report.cost_after_ms, r->report.cost_before_ms);
}

INSTANTIATE_TEST_SUITE_P(BothSearches, WeightSharingTest,
                         ::testing::Values(SearchKind::kBacktrack, SearchKind::kEqsat),
                         [](const ::testing::TestParamInfo<SearchKind>& p) {
                           return p.param == SearchKind::kEqsat ? "Eqsat" : "Backtrack";
                         });

}  // namespace
}  // namespace taso::optimizer
