#include "gtest/gtest.h"
#include "net/auth_processor.h"
#include "net/roles.h"
#include "net/tokens.h"

namespace taso::net {
namespace {

TEST(RolesTest, ReadsNeedRead) {
  EXPECT_EQ(RequiredRole("/taso.rules_db.RuleDb/ListRules"), Role::kRead);
  EXPECT_EQ(RequiredRole("/taso.profiler.Profiler/ListCache"), Role::kRead);
}

TEST(RolesTest, WritesNeedTheirRole) {
  EXPECT_EQ(RequiredRole("/taso.rules_db.HashStore/StreamGraphs"), Role::kWorker);
  EXPECT_EQ(RequiredRole("/taso.rules_db.RuleDb/ReportVerdicts"), Role::kWorker);
  EXPECT_EQ(RequiredRole("/taso.rules_db.RuleDb/PutRules"), Role::kAdmin);
  EXPECT_EQ(RequiredRole("/taso.profiler.Profiler/InvalidateCache"), Role::kAdmin);
  EXPECT_EQ(RequiredRole("/taso.optimizer.Optimizer/Optimize"), Role::kOptimize);
}

TEST(RolesTest, HealthIsOpenAndUnknownNeedsAdmin) {
  EXPECT_EQ(RequiredRole("/grpc.health.v1.Health/Check"), std::nullopt);
  EXPECT_EQ(RequiredRole("/taso.rules_db.RuleDb/SomeNewWrite"), Role::kAdmin);
}

TEST(RolesTest, Order) {
  EXPECT_TRUE(RoleAllows(Role::kWorker, Role::kRead));
  EXPECT_TRUE(RoleAllows(Role::kOptimize, Role::kRead));
  EXPECT_FALSE(RoleAllows(Role::kRead, Role::kWorker));
  EXPECT_FALSE(RoleAllows(Role::kWorker, Role::kAdmin));
  EXPECT_FALSE(RoleAllows(Role::kWorker, Role::kOptimize));
  EXPECT_FALSE(RoleAllows(Role::kOptimize, Role::kWorker));
  EXPECT_TRUE(RoleAllows(Role::kAdmin, Role::kOptimize));
  EXPECT_TRUE(RoleAllows(Role::kAdmin, Role::kWorker));
}

TEST(RolesTest, ParseRoundTrips) {
  for (Role r : {Role::kRead, Role::kWorker, Role::kOptimize, Role::kAdmin}) {
    EXPECT_EQ(*ParseRole(RoleName(r)), r);
  }
  EXPECT_FALSE(ParseRole("root").ok());
}

TEST(TokensTest, Sha256OfKnownText) {
  EXPECT_EQ(Sha256Hex("test"), "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
}

TEST(TokensTest, ParsesDigestsAndComments) {
  std::string text = "# who may call\n\nread " + Sha256Hex("r-token") + "\n  admin\t" + Sha256Hex("a-token") + "\n";
  absl::StatusOr<TokenTable> table = TokenTable::Parse(text, "tokens");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->size(), 2u);
  EXPECT_EQ(table->RoleOf("r-token"), Role::kRead);
  EXPECT_EQ(table->RoleOf("a-token"), Role::kAdmin);
  EXPECT_EQ(table->RoleOf("other"), std::nullopt);
}

TEST(TokensTest, RefusesPlainTokensBadRolesAndDuplicates) {
  auto plain = TokenTable::Parse("read my-secret-token\n", "tokens");
  EXPECT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("tokens:1:"), std::string::npos);
  EXPECT_NE(plain.status().message().find("sha256sum"), std::string::npos);
  EXPECT_FALSE(TokenTable::Parse("root " + Sha256Hex("x") + "\n", "tokens").ok());
  EXPECT_FALSE(TokenTable::Parse("read " + Sha256Hex("x") + "\nadmin " + Sha256Hex("x"), "tokens").ok());
  EXPECT_FALSE(TokenTable::Parse("# nothing\n", "tokens").ok());
  EXPECT_FALSE(TokenTable::Load("/nonexistent/tokens").ok());
}

TEST(AuthProcessorTest, CodesAndMessages) {
  TokenAuthProcessor processor(
      *TokenTable::Parse("worker " + Sha256Hex("w") + "\nadmin " + Sha256Hex("a") + "\n", "tokens"));
  std::optional<Role> role;
  EXPECT_TRUE(processor.Check("/grpc.health.v1.Health/Check", "", &role).ok());
  grpc::Status none = processor.Check("/taso.rules_db.RuleDb/ListRules", "", &role);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(processor.Check("/taso.rules_db.RuleDb/ListRules", "Bearer nope", &role).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(processor.Check("/taso.rules_db.RuleDb/ListRules", "Bearer w", &role).ok());
  EXPECT_EQ(role, Role::kWorker);
  grpc::Status denied = processor.Check("/taso.rules_db.RuleDb/PutRules", "Bearer w", &role);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(denied.error_message().find("needs role admin"), std::string::npos);
  EXPECT_TRUE(processor.Check("/taso.rules_db.RuleDb/PutRules", "Bearer a", &role).ok());
}

}  // namespace
}  // namespace taso::net
