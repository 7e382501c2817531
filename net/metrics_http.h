// A minimal HTTP/1.1 server for Prometheus scrapes: one thread, plain POSIX
// sockets, GET /metrics answers the registry's text, any other path 404,
// other methods 405. One request per connection; a request larger than
// kMaxRequestBytes or slower than a few seconds is dropped.
#ifndef TASO_NET_METRICS_HTTP_H_
#define TASO_NET_METRICS_HTTP_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "net/metrics.h"

namespace taso::net {

class MetricsHttpServer {
 public:
  static constexpr size_t kMaxRequestBytes = 8192;

  // Listens on "HOST:PORT" (port 0 picks one; see port()). The registry must
  // outlive the server.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& listen,
                                                                  const MetricsRegistry* registry);
  ~MetricsHttpServer();  // stops the thread and closes the socket

  int port() const { return port_; }

 private:
  MetricsHttpServer(int fd, int port, const MetricsRegistry* registry);
  void Serve();
  void Answer(int client) const;

  const int fd_;
  const int port_;
  const MetricsRegistry* registry_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace taso::net

#endif  // TASO_NET_METRICS_HTTP_H_
