#include "net/metrics_http.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace taso::net {
namespace {

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the scraper went away; nothing to do
    sent += static_cast<size_t>(n);
  }
}

std::string Response(const std::string& status, const std::string& content_type, const std::string& body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(const std::string& listen,
                                                                             const MetricsRegistry* registry) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_listen '", listen, "' must be HOST:PORT, e.g. 127.0.0.1:9464"));
  }
  std::string host = listen.substr(0, colon);
  std::string port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &found);
  if (rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_listen '", listen, "': cannot resolve: ", gai_strerror(rc)));
  }
  int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  bool ok = fd >= 0 && bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 16) == 0;
  freeaddrinfo(found);
  if (!ok) {
    std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", listen, ": ", why, " (port in use? pick another --metrics_listen)"));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  int port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(fd, port, registry));
}

MetricsHttpServer::MetricsHttpServer(int fd, int port, const MetricsRegistry* registry)
    : fd_(fd), port_(port), registry_(registry) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  stop_ = true;
  thread_.join();
  close(fd_);
}

void MetricsHttpServer::Serve() {
  while (!stop_) {
    pollfd waiting{fd_, POLLIN, 0};
    // Wake up now and then to notice stop_.
    if (poll(&waiting, 1, 200) <= 0) continue;
    int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    timeval timeout{2, 0};  // a slow or silent client cannot hold the thread
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    Answer(client);
    close(client);
  }
}

void MetricsHttpServer::Answer(int client) const {
  std::string request;
  char buffer[1024];
  while (!absl::StrContains(request, "\r\n\r\n") && !absl::StrContains(request, "\n\n")) {
    if (request.size() > kMaxRequestBytes) {
      SendAll(client, Response("431 Request Header Fields Too Large", "text/plain", "request too large\n"));
      return;
    }
    ssize_t n = recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<size_t>(n));
  }
  std::vector<std::string> first = absl::StrSplit(request.substr(0, request.find_first_of("\r\n")), ' ');
  if (first.size() != 3 || !absl::StartsWith(first[2], "HTTP/1.")) {
    SendAll(client, Response("400 Bad Request", "text/plain", "expected 'GET /metrics HTTP/1.1'\n"));
    return;
  }
  std::string path = first[1].substr(0, first[1].find('?'));
  if (path != "/metrics") {
    SendAll(client, Response("404 Not Found", "text/plain", "only /metrics is served here\n"));
    return;
  }
  if (first[0] != "GET") {
    SendAll(client, Response("405 Method Not Allowed", "text/plain", "use GET /metrics\n"));
    return;
  }
  SendAll(client, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", registry_->Render()));
}

}  // namespace taso::net
