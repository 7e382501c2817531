// The service's admission: calls beyond the concurrency and queue limits are
// refused at once. (How a request's options meet the server's defaults is
// optimize_options_test.)
#include "optimizer/optimizer_service.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "net/grpc_status.h"
#include "onnx_io/onnx_test_builders.h"
#include "optimizer/rewrite/test_util.h"

namespace taso::optimizer {
namespace {

// The analytic profiler, except that the first batch waits until released:
// a search that is provably still running when the next call arrives.
class HeldProfiler : public profiler::ProfilerClient {
 public:
  HeldProfiler() : inner_(testing::AnalyticProfiler()) {}
  absl::StatusOr<profiler::MeasureResponse> MeasureBatch(const profiler::MeasureRequest& request) override {
    if (!entered_.HasBeenNotified()) {
      entered_.Notify();
      release_.WaitForNotification();
    }
    return inner_->MeasureBatch(request);
  }
  absl::StatusOr<profiler::ListCacheResponse> ListCache(const profiler::ListCacheRequest& r) override {
    return inner_->ListCache(r);
  }
  absl::StatusOr<profiler::InvalidateCacheResponse> InvalidateCache(const profiler::InvalidateCacheRequest& r) override {
    return inner_->InvalidateCache(r);
  }
  std::string Describe() const override { return "a held analytic profiler"; }

  absl::Notification entered_, release_;

 private:
  std::unique_ptr<profiler::ProfilerClient> inner_;
};

OptimizeRequest ReluModel() {
  onnx_test::ModelSpec spec;
  spec.inputs = {onnx_test::Value("x", {1, 8})};
  spec.outputs = {onnx_test::Value("y", {1, 8})};
  spec.nodes = {onnx_test::MakeNode("Relu", {"x"}, {"y"})};
  OptimizeRequest request;
  request.set_model(onnx_test::Build(spec));
  request.mutable_options()->set_cost_backend(profiler::BACKEND_ANALYTIC);
  request.mutable_options()->set_time_limit_s(5);
  return request;
}

// One call as OptimizeFront makes it: admitted, then searched.
grpc::Status Call(OptimizerService& service, const OptimizeRequest& request) {
  const absl::Time deadline = absl::InfiniteFuture();
  auto ticket = service.Admit(deadline, nullptr);
  if (!ticket.ok()) return net::ToGrpc(ticket.status());
  OptimizeResponse response;
  return service.RunAdmitted(request, &response, deadline, [] { return false; });
}

TEST(OptimizerServiceTest, CallsBeyondTheConcurrencyAndQueueLimitsAreRefusedAtOnce) {
  HeldProfiler profiler;
  ServedRules rules{RuleSet{}};
  ServiceLimits limits;
  limits.max_concurrent = 1;
  limits.max_queued = 0;
  limits.defaults.measure = false;
  OptimizerService service(&rules, &profiler, limits);
  const OptimizeRequest request = ReluModel();

  grpc::Status first;
  std::thread running([&] { first = Call(service, request); });
  profiler.entered_.WaitForNotification();  // the first search is costing its graph
  const grpc::Status refused = Call(service, request);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(refused.error_message().find("--max_concurrent 1 --max_queued 0"), std::string::npos)
      << refused.error_message();
  profiler.release_.Notify();
  running.join();
  EXPECT_TRUE(first.ok()) << first.error_message();
  // The slot is free again.
  const grpc::Status next = Call(service, request);
  EXPECT_TRUE(next.ok()) << next.error_message();
}

}  // namespace
}  // namespace taso::optimizer
