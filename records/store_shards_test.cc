#include "records/store_shards.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso::records {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

rules_db::StoreInfo Info(int index, int count) {
  rules_db::StoreInfo info;
  info.set_store_index(index);
  info.set_store_count(count);
  return info;
}

TEST(CheckBatchRouting, AcceptsItsOwnRouting) {
  EXPECT_TRUE(CheckBatchRouting(Info(1, 3), 1, 3).ok());
  EXPECT_TRUE(CheckBatchRouting(Info(0, 1), 0, 1).ok());
}

TEST(CheckBatchRouting, RefusesAnotherOrderNamingBoth) {
  absl::Status s = CheckBatchRouting(Info(1, 3), 0, 3);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("routed for store 0 of 3"), HasSubstr("this is store 1 of 3")));
  s = CheckBatchRouting(Info(1, 3), 1, 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("store 1 of 2"), HasSubstr("store 1 of 3")));
}

TEST(CheckBatchRouting, UnroutedBatchFitsOnlyASingleStore) {
  EXPECT_TRUE(CheckBatchRouting(Info(0, 1), 0, 0).ok());
  absl::Status s = CheckBatchRouting(Info(0, 2), 0, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("no store routing"));
}

TEST(OrderStores, OrdersByTheStoresOwnIndex) {
  auto ordered = OrderStores({"b", "a", "c"}, {Info(1, 3), Info(0, 3), Info(2, 3)});
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_THAT(*ordered, ElementsAre("a", "b", "c"));
}

TEST(OrderStores, RefusesIncompleteOrInconsistentLists) {
  EXPECT_THAT(OrderStores({"a", "b"}, {Info(0, 3), Info(1, 3)}).status().message(), HasSubstr("list every store"));
  EXPECT_THAT(OrderStores({"a", "b"}, {Info(0, 2), Info(0, 2)}).status().message(), HasSubstr("both are store 0"));
  EXPECT_THAT(OrderStores({"a", "b"}, {Info(0, 2), Info(1, 3)}).status().message(), HasSubstr("one of 3"));
  EXPECT_EQ(OrderStores({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StoreShardFor, SpreadsByTheFingerprintsTopBytes) {
  std::string fp(16, '\0');
  fp[7] = 5;
  EXPECT_EQ(StoreShardFor(fp, 3), 2);
  EXPECT_EQ(StoreShardFor(fp, 1), 0);
}

}  // namespace
}  // namespace taso::records
