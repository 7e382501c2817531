#include "net/metrics_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace taso::net {
namespace {

// Sends `request` to 127.0.0.1:port over a real socket; returns the whole reply.
std::string Exchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return "connect failed";
  }
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) reply.append(buffer, n);
  close(fd);
  return reply;
}

class MetricsHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.AddCounter("taso_test_total", "Test counter").Increment({}, 3);
    auto started = MetricsHttpServer::Start("127.0.0.1:0", &registry_);
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = std::move(*started);
    ASSERT_GT(server_->port(), 0);
  }
  MetricsRegistry registry_;
  std::unique_ptr<MetricsHttpServer> server_;
};

TEST_F(MetricsHttpTest, GetMetricsAnswersTheRegistryAsPrometheusText) {
  std::string reply = Exchange(server_->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << reply;
  std::string body = "# HELP taso_test_total Test counter\n# TYPE taso_test_total counter\ntaso_test_total 3\n";
  EXPECT_NE(reply.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos) << reply;
  EXPECT_EQ(reply.substr(reply.size() - body.size()), body);
}

TEST_F(MetricsHttpTest, EveryScrapeSeesCurrentValues) {
  registry_.AddCounter("taso_test_total", "").Increment();
  std::string reply = Exchange(server_->port(), "GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_NE(reply.find("\ntaso_test_total 4\n"), std::string::npos) << reply;
}

TEST_F(MetricsHttpTest, OtherPathsAre404AndOtherMethods405) {
  EXPECT_EQ(Exchange(server_->port(), "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), "GET /metricsx HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405 ", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), "garbage\r\n\r\n").rfind("HTTP/1.1 400 ", 0), 0u);
}

TEST_F(MetricsHttpTest, OversizedRequestIsRefusedAndTheServerKeepsServing) {
  std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(3 * MetricsHttpServer::kMaxRequestBytes, 'a');
  EXPECT_EQ(Exchange(server_->port(), huge).rfind("HTTP/1.1 431 ", 0), 0u);
  EXPECT_EQ(Exchange(server_->port(), "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);
}

TEST(MetricsHttpStartTest, BadListenAddressIsAnActionableError) {
  MetricsRegistry registry;
  auto started = MetricsHttpServer::Start("no-port", &registry);
  ASSERT_FALSE(started.ok());
  EXPECT_NE(std::string(started.status().message()).find("HOST:PORT"), std::string::npos);
}

}  // namespace
}  // namespace taso::net
