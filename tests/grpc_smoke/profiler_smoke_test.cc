// A real gRPC server and client over loopback, built from the generated
// Profiler service code. The service implementation is a test double; the
// point is that the generated code, the system gRPC libraries and the
// per-entry error convention of MeasureBatch work together end to end.

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/create_channel.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include "gtest/gtest.h"
#include "proto/profiler.grpc.pb.h"
#include "proto/profiler.pb.h"

namespace {

using taso::profiler::Cost;
using taso::profiler::MeasureRequest;
using taso::profiler::MeasureResponse;
using taso::profiler::MeasureResult;
using taso::profiler::OpSignature;

constexpr char kFakeDevice[] = "test-double";

// Test double: a signature without inputs is malformed (INVALID_ARGUMENT in
// that entry); any other gets a made-up cost of 1 ms per input. Every other
// RPC is left to the generated base class, which answers UNIMPLEMENTED.
class FakeProfiler final : public taso::profiler::Profiler::Service {
 public:
  grpc::Status MeasureBatch(grpc::ServerContext*, const MeasureRequest* request,
                            MeasureResponse* response) override {
    for (const OpSignature& sig : request->signatures()) {
      MeasureResult* result = response->add_results();
      if (sig.inputs_size() == 0) {
        result->mutable_error()->set_code(grpc::StatusCode::INVALID_ARGUMENT);
        result->mutable_error()->set_message("signature has no inputs");
        continue;
      }
      Cost* cost = result->mutable_cost();
      cost->set_mean_ms(1.0 * sig.inputs_size());
      cost->set_median_ms(cost->mean_ms());
      cost->set_min_ms(cost->mean_ms());
      cost->set_repetitions(1);
      cost->set_backend(taso::profiler::BACKEND_ANALYTIC);
      cost->set_device(kFakeDevice);
      cost->set_is_estimate(true);
    }
    return grpc::Status::OK;
  }
};

OpSignature Signature(taso::ir::OpKind kind, int num_inputs) {
  OpSignature sig;
  sig.set_kind(kind);
  for (int i = 0; i < num_inputs; ++i) {
    taso::ir::TensorType* t = sig.add_inputs();
    t->set_dtype(taso::ir::DTYPE_FLOAT32);
    t->add_dims(8);
    t->add_dims(8);
  }
  return sig;
}

class ProfilerSmokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Both must be set before the builder is created, as in every service
    // binary (DESIGN.md: health checking and reflection).
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();

    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0) << "no port was bound";

    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                   grpc::InsecureChannelCredentials());
    stub_ = taso::profiler::Profiler::NewStub(channel_);
  }

  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(5));
      server_->Wait();
    }
  }

  // Each call gets a deadline so that a hung server fails the test quickly.
  static void SetDeadline(grpc::ClientContext* context) {
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(10));
  }

  int port_ = 0;
  FakeProfiler service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<taso::profiler::Profiler::Stub> stub_;
};

TEST_F(ProfilerSmokeTest, MeasureBatchReportsPerEntryResults) {
  MeasureRequest request;
  *request.add_signatures() = Signature(taso::ir::OP_MATMUL, 2);
  *request.add_signatures() = Signature(taso::ir::OP_RELU, 0);  // malformed
  *request.add_signatures() = Signature(taso::ir::OP_CONCAT, 3);

  grpc::ClientContext context;
  SetDeadline(&context);
  MeasureResponse response;
  grpc::Status status = stub_->MeasureBatch(&context, request, &response);

  // One bad entry does not fail the batch.
  ASSERT_TRUE(status.ok()) << status.error_code() << ": "
                           << status.error_message();
  ASSERT_EQ(response.results_size(), 3);

  const MeasureResult& matmul = response.results(0);
  ASSERT_EQ(matmul.outcome_case(), MeasureResult::kCost);
  EXPECT_DOUBLE_EQ(matmul.cost().mean_ms(), 2.0);
  EXPECT_EQ(matmul.cost().backend(), taso::profiler::BACKEND_ANALYTIC);
  EXPECT_EQ(matmul.cost().device(), kFakeDevice);
  EXPECT_TRUE(matmul.cost().is_estimate());

  const MeasureResult& bad = response.results(1);
  ASSERT_EQ(bad.outcome_case(), MeasureResult::kError);
  EXPECT_EQ(bad.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(bad.error().message(), "signature has no inputs");

  const MeasureResult& concat = response.results(2);
  ASSERT_EQ(concat.outcome_case(), MeasureResult::kCost);
  EXPECT_DOUBLE_EQ(concat.cost().mean_ms(), 3.0);
}

TEST_F(ProfilerSmokeTest, EmptyBatchGivesEmptyResponse) {
  grpc::ClientContext context;
  SetDeadline(&context);
  MeasureResponse response;
  grpc::Status status =
      stub_->MeasureBatch(&context, MeasureRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.results_size(), 0);
}

TEST_F(ProfilerSmokeTest, UnimplementedRpcFailsWithStatus) {
  grpc::ClientContext context;
  SetDeadline(&context);
  taso::profiler::ListCacheResponse response;
  grpc::Status status = stub_->ListCache(
      &context, taso::profiler::ListCacheRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

// The Health/Check RPC itself is not called here: Debian ships no generated
// grpc/health/v1 health proto code. What can be checked is that the default
// health service exists on the server and accepts status changes.
TEST_F(ProfilerSmokeTest, HealthServiceIsEnabled) {
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  ASSERT_NE(health, nullptr);
  health->SetServingStatus("taso.profiler.Profiler", true);
  health->SetServingStatus(false);
  health->SetServingStatus(true);
}

}  // namespace
