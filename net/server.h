// What every taso service binary does around its service: listen, health
// checking and reflection, announce the bound port, and shut down gracefully
// on SIGTERM or SIGINT (in-flight RPCs finish; new ones are refused).
#ifndef TASO_NET_SERVER_H_
#define TASO_NET_SERVER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/metrics.h"

namespace taso::net {

struct ServerOptions {
  std::string listen = "127.0.0.1:0";
  // If set, the bound port is written here once the server accepts calls
  // (how a launcher learns the port of ":0").
  std::string port_file;
  int max_message_mb = 64;  // 1 to 2047: gRPC and protobuf stop below 2 GiB
  // Threads serving calls at most (gRPC's ResourceQuota): a flood of calls
  // is refused with RESOURCE_EXHAUSTED instead of a thread each. 0: no limit.
  int max_threads = 256;
  std::string name = "server";  // for log lines
  // TLS and tokens (net/credentials.h); default plaintext, no auth.
  ServerSecurity security;
  // On SIGTERM: new calls are refused and calls in flight get this long to
  // finish before they are cancelled (a search sees that and stops).
  int drain_seconds = 5;
  // Metrics (net/metrics_flags.h): every call is counted and timed into
  // `metrics` (RunServer keeps its own registry when null), served on GET
  // /metrics at `metrics_listen` when that is non-empty; one stderr line per
  // call when `log_requests`.
  MetricsRegistry* metrics = nullptr;
  std::string metrics_listen;
  bool log_requests = true;
  // Polled every second while serving: while it returns an error the gRPC
  // health check says NOT_SERVING (a probe, `taso health` or `taso status`,
  // then sees it) and the error is logged once. Calls are still answered:
  // a store whose disk filled serves reads. Unset: always SERVING.
  std::function<absl::Status()> health;
  // Serves the methods no registered service handles (taso_optimizer's
  // Optimize, admitted before its request is read: optimizer/optimize_front.h).
  grpc::CallbackGenericService* generic_service = nullptr;
};

// Call first in main, before any thread starts, so that SIGTERM and SIGINT
// reach RunServer's wait instead of killing the process from another thread.
void BlockTerminationSignals();

// True for 127.x, localhost and [::1] listen addresses ("HOST:PORT").
bool IsLoopback(absl::string_view listen);

// Blocks until a termination signal arrives, then shuts the server down.
absl::Status RunServer(const ServerOptions& options, const std::vector<grpc::Service*>& services);

}  // namespace taso::net

#endif  // TASO_NET_SERVER_H_
