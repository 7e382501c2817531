#include "net/request_interceptor.h"

#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"

namespace taso::net {
namespace {

using grpc::experimental::InterceptionHookPoints;

class RequestMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RequestMetricsInterceptor(grpc::experimental::ServerRpcInfo* info, const Counter& requests,
                            const Histogram& latency, const std::string& name, bool log)
      : method_(info->method() ? info->method() : "unknown"),
        context_(info->server_context()),
        requests_(requests),
        latency_(latency),
        name_(name),
        log_(log && !absl::StartsWith(method_, "/grpc.health.")),  // probes would flood the log
        start_(absl::Now()) {}

  // A call that ends without sending a status (the client went away) counts as CANCELLED.
  ~RequestMetricsInterceptor() override {
    if (!recorded_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // The peer is known once the call is under way, not when the interceptor is made.
    if (peer_.empty() && context_ != nullptr) peer_ = context_->peer();
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) && !recorded_) {
      Record(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    recorded_ = true;
    double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    std::string code_name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
    requests_.Increment({method_, code_name});
    latency_.Observe(seconds, {method_});
    if (log_) {
      std::fprintf(stderr, "%s: %s %s %.1f ms %s\n", name_.c_str(), method_.c_str(), code_name.c_str(),
                   seconds * 1e3, peer_.c_str());
    }
  }

  const std::string method_;
  grpc::ServerContextBase* const context_;
  std::string peer_;
  const Counter requests_;
  const Histogram latency_;
  const std::string name_;
  const bool log_;
  const absl::Time start_;
  bool recorded_ = false;
};

}  // namespace

RequestMetricsFactory::RequestMetricsFactory(MetricsRegistry* registry, std::string name, bool log_requests)
    : requests_(registry->AddCounter("taso_rpc_requests_total", "RPCs handled, by method and status code",
                                     {"method", "code"})),
      latency_(registry->AddHistogram("taso_rpc_duration_seconds", "RPC latency from arrival to status, by method",
                                      LatencyBuckets(), {"method"})),
      name_(std::move(name)),
      log_requests_(log_requests) {}

grpc::experimental::Interceptor* RequestMetricsFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RequestMetricsInterceptor(info, requests_, latency_, name_, log_requests_);
}

}  // namespace taso::net
