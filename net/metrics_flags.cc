#include "net/metrics_flags.h"

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics on GET http://HOST:PORT/metrics (e.g. 127.0.0.1:9464); empty: off. "
          "Plain HTTP without authentication: keep it on loopback or a private network");
ABSL_FLAG(bool, log_requests, true, "servers: write one line per RPC to stderr (method, code, ms, peer)");

namespace taso::net {

void ApplyMetricsFlags(ServerOptions* options) {
  options->metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options->log_requests = absl::GetFlag(FLAGS_log_requests);
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> StartMetricsFromFlags(const MetricsRegistry* registry,
                                                                         const std::string& name) {
  std::string listen = absl::GetFlag(FLAGS_metrics_listen);
  if (listen.empty()) return std::unique_ptr<MetricsHttpServer>();
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server = MetricsHttpServer::Start(listen, registry);
  if (server.ok()) std::fprintf(stderr, "%s: metrics on port %d\n", name.c_str(), (*server)->port());
  return server;
}

}  // namespace taso::net
