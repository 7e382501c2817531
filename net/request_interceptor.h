// A gRPC server interceptor installed by RunServer: counts every call by
// method and status code, observes its latency, and optionally writes one
// log line per call to stderr ("NAME: METHOD CODE 12.3 ms PEER").
#ifndef TASO_NET_REQUEST_INTERCEPTOR_H_
#define TASO_NET_REQUEST_INTERCEPTOR_H_

#include <string>

#include "grpcpp/support/server_interceptor.h"
#include "net/metrics.h"

namespace taso::net {

class RequestMetricsFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // Declares taso_rpc_requests_total and taso_rpc_duration_seconds in
  // `registry`, which must outlive the server. `name` prefixes log lines.
  RequestMetricsFactory(MetricsRegistry* registry, std::string name, bool log_requests);

  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;

 private:
  const Counter requests_;
  const Histogram latency_;
  const std::string name_;
  const bool log_requests_;
};

}  // namespace taso::net

#endif  // TASO_NET_REQUEST_INTERCEPTOR_H_
