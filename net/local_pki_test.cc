#include "net/local_pki.h"

#include <sys/stat.h>

#include "gtest/gtest.h"
#include "net/credentials.h"
#include "net/roles.h"
#include "net/test_files.h"
#include "net/tokens.h"

namespace taso::net {
namespace {

mode_t Mode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(LocalPkiTest, MakesACaCertificatesAndTokensOnlyTheOwnerReads) {
  auto pki = EnsureLocalPki(TestPath("pki"), {"store", "optimizer"});
  ASSERT_TRUE(pki.ok()) << pki.status();
  EXPECT_EQ(Mode(pki->dir), 0700u);
  EXPECT_EQ(Mode(pki->dir + "/ca.key"), 0600u);
  EXPECT_EQ(Mode(pki->tokens_file), 0600u);
  ASSERT_EQ(pki->servers.size(), 2u);
  for (const auto& [name, server] : pki->servers) {
    EXPECT_EQ(Mode(server.key), 0600u) << name;
    EXPECT_NE(ReadText(server.cert).find("BEGIN CERTIFICATE"), std::string::npos) << name;
    // What a server is given: a certificate and key gRPC accepts, with the tokens file.
    ServerSecurity security{server.cert, server.key, "", pki->tokens_file};
    EXPECT_TRUE(MakeServerCredentials(security).ok()) << name;
  }
  // Each role's token is in the tokens file, as that role, by digest only.
  auto table = TokenTable::Load(pki->tokens_file);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->size(), LocalPkiRoles().size());
  for (const auto& [role, file] : pki->token_files) {
    EXPECT_EQ(Mode(file), 0600u) << role;
    auto token = ReadTokenFile(file);
    ASSERT_TRUE(token.ok()) << token.status();
    ASSERT_TRUE(table->RoleOf(*token).has_value()) << role;
    EXPECT_EQ(RoleName(*table->RoleOf(*token)), role);
    EXPECT_EQ(ReadText(pki->tokens_file).find(*token), std::string::npos) << "a raw token in the tokens file";
  }
}

TEST(LocalPkiTest, ASecondStartKeepsTheSameCaAndTokens) {
  auto first = EnsureLocalPki(TestPath("again"), {"store"});
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string ca = ReadText(first->ca_cert), token = ReadText(first->token_files.at("worker"));
  auto second = EnsureLocalPki(TestPath("again"), {"store"});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(ReadText(second->ca_cert), ca);
  EXPECT_EQ(ReadText(second->token_files.at("worker")), token);
}

}  // namespace
}  // namespace taso::net
