// Every RPC of every taso service has its own row in the role table, so a
// new RPC is classified on purpose rather than falling to the admin default
// (which would lock out, say, every reader that needs it).
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "net/roles.h"
#include "proto/optimizer.grpc.pb.h"
#include "proto/profiler.grpc.pb.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso {
namespace {

TEST(RoleTable, ClassifiesEveryMethodOfEveryService) {
  int methods = 0;
  for (const char* name : {"taso.rules_db.HashStore", "taso.rules_db.RuleDb", "taso.profiler.Profiler",
                           "taso.optimizer.Optimizer"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string path = absl::StrCat("/", service->full_name(), "/", service->method(i)->name());
      EXPECT_TRUE(net::IsClassified(path)) << path << " has no row in net/roles.cc";
      ++methods;
    }
  }
  EXPECT_GE(methods, 15);
  // Reading a store's index is every client's first call.
  EXPECT_EQ(net::RequiredRole("/taso.rules_db.HashStore/GetStoreInfo"), net::Role::kRead);
}

}  // namespace
}  // namespace taso
