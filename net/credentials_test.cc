#include "net/credentials.h"

#include "gtest/gtest.h"
#include "net/server.h"

namespace taso::net {
namespace {

TEST(IsLoopbackTest, Addresses) {
  EXPECT_TRUE(IsLoopback("127.0.0.1:7070"));
  EXPECT_TRUE(IsLoopback("localhost:0"));
  EXPECT_TRUE(IsLoopback("[::1]:7070"));
  EXPECT_FALSE(IsLoopback("0.0.0.0:7070"));
  EXPECT_FALSE(IsLoopback("[::]:7070"));
  EXPECT_FALSE(IsLoopback("10.0.0.5:7070"));
}

TEST(ServerCredentialsTest, DefaultIsPlaintext) {
  EXPECT_TRUE(MakeServerCredentials(ServerSecurity()).ok());
}

TEST(ServerCredentialsTest, TokensNeedTls) {
  ServerSecurity security;
  security.tokens_file = "/any/tokens";
  absl::StatusOr<ServingCredentials> made = MakeServerCredentials(security);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("--tokens_file needs TLS"), std::string::npos);
}

TEST(ServerCredentialsTest, CertNeedsKeyAndMissingFilesNameTheFlag) {
  ServerSecurity security;
  security.cert = "/nonexistent/cert.pem";
  EXPECT_NE(MakeServerCredentials(security).status().message().find("--tls_key"), std::string::npos);
  security.key = "/nonexistent/key.pem";
  absl::Status missing = MakeServerCredentials(security).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("--tls_cert"), std::string::npos);
}

TEST(ClientCredentialsTest, TokenAndClientCertNeedTls) {
  ClientSecurity security;
  security.token_file = "/any/token";
  EXPECT_EQ(ConfigureClients(security).code(), absl::StatusCode::kInvalidArgument);
  security = ClientSecurity();
  security.client_cert = "/any/cert.pem";
  EXPECT_EQ(ConfigureClients(security).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ConfigureClients(ClientSecurity()).ok());
  EXPECT_NE(NewChannel("127.0.0.1:1"), nullptr);
}

TEST(ClientCredentialsTest, MissingCaNamesTheFlag) {
  ClientSecurity security;
  security.ca = "/nonexistent/ca.pem";
  absl::Status s = ConfigureClients(security);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("--tls_ca"), std::string::npos);
}

}  // namespace
}  // namespace taso::net
