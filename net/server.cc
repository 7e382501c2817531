#include "net/server.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "net/metrics_http.h"
#include "net/request_interceptor.h"

namespace taso::net {

void BlockTerminationSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

bool IsLoopback(absl::string_view listen) {
  size_t colon = listen.rfind(':');
  absl::string_view host = listen.substr(0, colon == absl::string_view::npos ? listen.size() : colon);
  return host == "localhost" || host == "[::1]" || absl::StartsWith(host, "127.");
}

namespace {

// Blocks until SIGTERM or SIGINT, meanwhile keeping the health check in step
// with options.health; returns the signal.
int WaitForTermination(const sigset_t& signals, const ServerOptions& options, grpc::Server& server) {
  if (!options.health) {
    int received = 0;
    sigwait(&signals, &received);
    return received;
  }
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  bool serving = true;
  const timespec poll{1, 0};
  while (true) {
    const int received = sigtimedwait(&signals, nullptr, &poll);
    if (received > 0) return received;
    const absl::Status s = options.health();
    if (s.ok() == serving) continue;
    serving = s.ok();
    if (health != nullptr) health->SetServingStatus(serving);
    if (serving) {
      std::fprintf(stderr, "%s: health SERVING again\n", options.name.c_str());
    } else {
      std::fprintf(stderr, "%s: health NOT_SERVING: %s\n", options.name.c_str(), std::string(s.message()).c_str());
    }
  }
}

}  // namespace

absl::Status RunServer(const ServerOptions& options, const std::vector<grpc::Service*>& services) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  absl::StatusOr<ServingCredentials> credentials = MakeServerCredentials(options.security);
  if (!credentials.ok()) return credentials.status();
  if (!options.security.locked() && !IsLoopback(options.listen)) {
    // Off loopback, a server without TLS and tokens makes every caller admin.
    const std::string what = options.security.tls() ? "with TLS but without tokens (every caller would be admin)"
                                                    : "in plaintext without authentication";
    if (!options.security.insecure) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to serve ", options.listen, " ", what, ": give --tls_cert, --tls_key and --tokens_file ",
          "(docs/security.md), listen on 127.0.0.1, or pass --insecure to serve it open on purpose"));
    }
    std::fprintf(stderr, "%s: warning: --insecure: serving %s %s\n", options.name.c_str(), options.listen.c_str(),
                 what.c_str());
  }
  if (options.max_message_mb < 1 || options.max_message_mb > 2047) {
    return absl::InvalidArgumentError(absl::StrCat("largest message ", options.max_message_mb,
                                                   " MiB: it must be 1 to 2047 (gRPC and protobuf stop below 2 GiB)"));
  }
  if (options.max_threads < 0) return absl::InvalidArgumentError("--max_threads must be >= 0");
  grpc::ServerBuilder builder;
  if (options.max_threads > 0) {
    grpc::ResourceQuota quota(options.name);
    quota.SetMaxThreads(options.max_threads);
    builder.SetResourceQuota(quota);
  }
  int port = 0;
  builder.AddListeningPort(options.listen, credentials->credentials, &port);
  builder.SetMaxReceiveMessageSize(options.max_message_mb << 20);
  builder.SetMaxSendMessageSize(options.max_message_mb << 20);
  for (grpc::Service* s : services) builder.RegisterService(s);
  if (options.generic_service != nullptr) builder.RegisterCallbackGenericService(options.generic_service);
  MetricsRegistry own_metrics;
  MetricsRegistry* metrics = options.metrics ? options.metrics : &own_metrics;
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<RequestMetricsFactory>(metrics, options.name, options.log_requests));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<MetricsHttpServer> metrics_server;
  if (!options.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<MetricsHttpServer>> started = MetricsHttpServer::Start(options.metrics_listen, metrics);
    if (!started.ok()) return started.status();
    metrics_server = std::move(*started);
    std::fprintf(stderr, "%s: metrics on port %d\n", options.name.c_str(), metrics_server->port());
  }

  BlockTerminationSignals();
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);

  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen,
                                               " (address in use or not valid)"));
  }
  if (!options.port_file.empty()) {
    std::string tmp = options.port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << port << "\n";
      if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp));
    }
    if (rename(tmp.c_str(), options.port_file.c_str()) != 0) {
      return absl::PermissionDeniedError(absl::StrCat("cannot write ", options.port_file));
    }
  }
  std::fprintf(stderr, "%s: listening on port %d\n", options.name.c_str(), port);
  int received = WaitForTermination(signals, options, *server);
  std::fprintf(stderr, "%s: signal %d, shutting down\n", options.name.c_str(), received);
  std::fprintf(stderr, "%s: draining calls in flight for up to %d s\n", options.name.c_str(), options.drain_seconds);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(options.drain_seconds));
  server->Wait();
  return absl::OkStatus();
}

}  // namespace taso::net
