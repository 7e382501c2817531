#include "profiler/open_client.h"

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/grpc_status.h"
#include "net/retry.h"
#include "proto/profiler.grpc.pb.h"

namespace taso::profiler {
namespace {

class InProcess final : public ProfilerClient {
 public:
  InProcess(CostProfiler* profiler, std::unique_ptr<CostProfiler> owned)
      : owned_(std::move(owned)), profiler_(profiler) {}
  absl::StatusOr<MeasureResponse> MeasureBatch(const MeasureRequest& r) override { return profiler_->MeasureBatch(r); }
  absl::StatusOr<MeasureGraphResponse> MeasureGraph(const MeasureGraphRequest& r) override {
    return profiler_->MeasureGraph(r);
  }
  absl::StatusOr<ListCacheResponse> ListCache(const ListCacheRequest& r) override { return profiler_->ListCache(r); }
  absl::StatusOr<InvalidateCacheResponse> InvalidateCache(const InvalidateCacheRequest& r) override {
    return profiler_->InvalidateCache(r);
  }
  std::string Describe() const override { return "embedded profiler"; }

 private:
  std::unique_ptr<CostProfiler> owned_;
  CostProfiler* profiler_;
};

class Remote final : public ProfilerClient {
 public:
  Remote(std::string address, std::shared_ptr<grpc::Channel> channel, const RemoteOptions& options)
      : address_(std::move(address)), stub_(Profiler::NewStub(channel)), options_(options) {}

  absl::StatusOr<MeasureResponse> MeasureBatch(const MeasureRequest& r) override {
    return Call<MeasureResponse>(r, &Profiler::Stub::MeasureBatch);
  }
  absl::StatusOr<MeasureGraphResponse> MeasureGraph(const MeasureGraphRequest& r) override {
    return Call<MeasureGraphResponse>(r, &Profiler::Stub::MeasureGraph);
  }
  absl::StatusOr<ListCacheResponse> ListCache(const ListCacheRequest& r) override {
    return Call<ListCacheResponse>(r, &Profiler::Stub::ListCache);
  }
  absl::StatusOr<InvalidateCacheResponse> InvalidateCache(const InvalidateCacheRequest& r) override {
    return Call<InvalidateCacheResponse>(r, &Profiler::Stub::InvalidateCache);
  }
  std::string Describe() const override { return absl::StrCat("taso_profiler at ", address_); }

 private:
  template <typename Response, typename Request, typename Method>
  absl::StatusOr<Response> Call(const Request& request, Method method) {
    Response response;
    net::RetryPolicy policy;
    policy.retry_for = options_.retry_for;
    absl::Status s = net::RetryWithBackoff(policy, [&]() -> absl::Status {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(options_.call_timeout));
      return net::FromGrpc((stub_.get()->*method)(&context, request, &response), Describe());
    });
    if (!s.ok()) return s;
    return response;
  }

  std::string address_;
  std::unique_ptr<Profiler::Stub> stub_;
  RemoteOptions options_;
};

}  // namespace

std::unique_ptr<ProfilerClient> InProcessClient(CostProfiler* profiler) {
  return std::make_unique<InProcess>(profiler, nullptr);
}

std::unique_ptr<ProfilerClient> InProcessClient(std::unique_ptr<CostProfiler> profiler) {
  CostProfiler* raw = profiler.get();
  return std::make_unique<InProcess>(raw, std::move(profiler));
}

absl::StatusOr<std::unique_ptr<ProfilerClient>> ConnectProfiler(const std::string& address,
                                                                const RemoteOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto channel = taso::net::NewChannel(address, args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                 absl::ToChronoMilliseconds(options.connect_timeout))) {
    return absl::UnavailableError(absl::StrCat("taso_profiler at ", address, " is unreachable (no answer within ",
                                               absl::FormatDuration(options.connect_timeout),
                                               "); start it with `taso_profiler --listen ", address, "`"));
  }
  return std::unique_ptr<ProfilerClient>(std::make_unique<Remote>(address, channel, options));
}

absl::StatusOr<std::unique_ptr<ProfilerClient>> OpenProfiler(const std::string& address,
                                                             const ProfilerOptions& embedded,
                                                             CostProfiler** embedded_profiler) {
  if (!address.empty()) return ConnectProfiler(address);
  auto profiler = CostProfiler::Create(embedded);
  if (!profiler.ok()) return profiler.status();
  if (embedded_profiler != nullptr) *embedded_profiler = profiler->get();
  return InProcessClient(std::move(*profiler));
}

}  // namespace taso::profiler
