// A fused kernel the backend cannot run is priced as its decomposition,
// never at 0, which would make every search choose it.
#include "optimizer/passes/cost_model.h"

#include "core/decomposition.h"
#include "gtest/gtest.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

using testing::F32;

// The analytic costs, with no kernel for composite operators (as the cuda
// backend has none for fused_gemm).
class NoFusedKernels : public testing::ForwardingProfiler {
 public:
  NoFusedKernels() : ForwardingProfiler(testing::AnalyticProfiler()) {}
  absl::StatusOr<profiler::MeasureResponse> MeasureBatch(const profiler::MeasureRequest& request) override {
    auto response = inner().MeasureBatch(request);
    if (!response.ok()) return response;
    for (int i = 0; i < request.signatures_size(); ++i) {
      if (!IsComposite(static_cast<OpKind>(request.signatures(i).kind()))) continue;
      profiler::MeasureResult* r = response->mutable_results(i);
      r->clear_cost();
      r->mutable_error()->set_code(static_cast<int>(absl::StatusCode::kUnimplemented));
      r->mutable_error()->set_message("no kernel for this operator");
    }
    return response;
  }
  std::string Describe() const override { return "analytic without fused kernels"; }
};

Graph Primitives(int64_t n) {
  Graph g;
  TensorRef x = g.AddInput("x", F32({1, n}));
  TensorRef w = g.AddInput("w", F32({n, n}));
  TensorRef b = g.AddInput("b", F32({n}));
  auto mm = g.AddOp1(OpKind::kMatMul, {}, {x, w});
  auto sum = g.AddOp1(OpKind::kEwAdd, {}, {*mm, b});
  g.AddOutput("y", *g.AddOp1(OpKind::kRelu, {}, {*sum}));
  return g;
}

Graph Fused(int64_t n) {
  Graph g;
  OpParams relu;
  relu.activation = Activation::kRelu;
  TensorRef x = g.AddInput("x", F32({1, n}));
  TensorRef w = g.AddInput("w", F32({n, n}));
  TensorRef b = g.AddInput("b", F32({n}));
  g.AddOutput("y", *g.AddOp1(OpKind::kFusedGemm, relu, {x, w, b}));
  return g;
}

TEST(CostModelTest, AFusedKernelWithoutOneCostsItsDecomposition) {
  NoFusedKernels client;
  CostModel cost(&client);
  auto fused = cost.GraphCost(Fused(256));
  auto parts = cost.GraphCost(Primitives(256));
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_GT(*fused, 0);
  EXPECT_DOUBLE_EQ(*fused, *parts);
  EXPECT_EQ(cost.unmeasured(), 0);
  EXPECT_EQ(cost.priced_as_decomposition().size(), 1u);
}

TEST(CostModelTest, AFusedKernelWithOneCostsWhatItMeasures) {
  auto client = testing::AnalyticProfiler();
  CostModel cost(client.get());
  auto fused = cost.GraphCost(Fused(256));
  auto parts = cost.GraphCost(Primitives(256));
  ASSERT_TRUE(fused.ok() && parts.ok());
  EXPECT_GT(*fused, 0);
  EXPECT_LT(*fused, *parts) << "one kernel launch, not three";
  EXPECT_TRUE(cost.priced_as_decomposition().empty());
}

}  // namespace
}  // namespace taso::optimizer
