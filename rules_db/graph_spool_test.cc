#include "rules_db/graph_spool.h"

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "records/packed_records.h"
#include "storage/test_dir.h"

namespace taso::rules_db {
namespace {

// A 16-byte fingerprint whose first byte (its bucket) is `bucket`.
std::string Fingerprint(int bucket, int tail) {
  std::string fp(records::kFingerprintBytes, '\0');
  fp[0] = static_cast<char>(bucket);
  fp[15] = static_cast<char>(tail);
  return fp;
}

std::string Packed(const std::vector<std::pair<std::string, std::string>>& records) {
  std::string out;
  for (const auto& [fp, encoding] : records) records::AppendPackedRecord(fp, encoding, out);
  return out;
}

GraphSpool::Lengths Zero() { return GraphSpool::Lengths{}; }

TEST(GraphSpoolTest, EachRecordGoesToItsFingerprintsBucketInAnyBatchOrder) {
  const std::string dir = storage::FreshTestDir("spool_order");
  auto spool = GraphSpool::Open(dir, Zero());
  ASSERT_TRUE(spool.ok()) << spool.status();
  const std::string sorted = Packed({{Fingerprint(1, 0), "a"}, {Fingerprint(1, 1), "b"}, {Fingerprint(7, 0), "c"}});
  const std::string unsorted = Packed({{Fingerprint(7, 2), "d"}, {Fingerprint(1, 3), "e"}, {Fingerprint(7, 1), "f"}});
  ASSERT_TRUE((*spool)->Append(sorted).ok());
  ASSERT_TRUE((*spool)->Append(unsorted).ok());

  auto one = (*spool)->ReadBucket(1);
  auto seven = (*spool)->ReadBucket(7);
  auto empty = (*spool)->ReadBucket(2);
  ASSERT_TRUE(one.ok() && seven.ok() && empty.ok());
  EXPECT_EQ(*one, Packed({{Fingerprint(1, 0), "a"}, {Fingerprint(1, 1), "b"}, {Fingerprint(1, 3), "e"}}));
  EXPECT_EQ(*seven, Packed({{Fingerprint(7, 0), "c"}, {Fingerprint(7, 2), "d"}, {Fingerprint(7, 1), "f"}}));
  EXPECT_EQ(*empty, "");
  uint64_t total = 0;
  for (uint64_t n : (*spool)->lengths()) total += n;
  EXPECT_EQ(total, sorted.size() + unsorted.size());
  EXPECT_EQ((*spool)->lengths()[1], one->size());
}

TEST(GraphSpoolTest, AMalformedBatchWritesNothing) {
  const std::string dir = storage::FreshTestDir("spool_malformed");
  auto spool = GraphSpool::Open(dir, Zero());
  ASSERT_TRUE(spool.ok()) << spool.status();
  std::string batch = Packed({{Fingerprint(3, 0), "ab"}, {Fingerprint(4, 0), "cd"}});
  batch.pop_back();  // the last record is cut short
  const absl::Status s = (*spool)->Append(batch);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ((*spool)->lengths(), Zero());
  auto three = (*spool)->ReadBucket(3);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(*three, "");
}

// What the store relies on after a crash: reopening with the lengths it
// logged drops whatever was appended after them.
TEST(GraphSpoolTest, ReopeningCutsWhatWasAppendedAfterTheCommittedLengths) {
  const std::string dir = storage::FreshTestDir("spool_reopen");
  const std::string first = Packed({{Fingerprint(5, 0), "acked"}});
  GraphSpool::Lengths committed;
  {
    auto spool = GraphSpool::Open(dir, Zero());
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE((*spool)->Append(first).ok());
    committed = (*spool)->lengths();
    ASSERT_TRUE((*spool)->Append(Packed({{Fingerprint(5, 1), "lost"}, {Fingerprint(9, 0), "lost"}})).ok());
  }
  auto decoded = GraphSpool::DecodeLengths(GraphSpool::EncodeLengths(committed));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, committed);
  auto reopened = GraphSpool::Open(dir, *decoded);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto five = (*reopened)->ReadBucket(5);
  auto nine = (*reopened)->ReadBucket(9);
  ASSERT_TRUE(five.ok() && nine.ok());
  EXPECT_EQ(*five, first);
  EXPECT_EQ(*nine, "");
  // Appending goes on after the acknowledged records.
  ASSERT_TRUE((*reopened)->Append(Packed({{Fingerprint(5, 2), "again"}})).ok());
  auto again = (*reopened)->ReadBucket(5);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, first + Packed({{Fingerprint(5, 2), "again"}}));
}

TEST(GraphSpoolTest, AFileShorterThanAcknowledgedIsDataLoss) {
  const std::string dir = storage::FreshTestDir("spool_short");
  {
    auto spool = GraphSpool::Open(dir, Zero());
    ASSERT_TRUE(spool.ok()) << spool.status();
  }
  GraphSpool::Lengths claimed = Zero();
  claimed[6] = 100;
  auto reopened = GraphSpool::Open(dir, claimed);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(reopened.status().message().find("bucket-006"), std::string::npos) << reopened.status();
}

TEST(GraphSpoolTest, LengthsOfTheWrongSizeDoNotDecode) {
  EXPECT_EQ(GraphSpool::DecodeLengths("short").status().code(), absl::StatusCode::kDataLoss);
}

TEST(GraphSpoolTest, RemoveDeletesTheFiles) {
  const std::string dir = storage::FreshTestDir("spool_remove");
  {
    auto spool = GraphSpool::Open(dir, Zero());
    ASSERT_TRUE(spool.ok()) << spool.status();
    ASSERT_TRUE((*spool)->Append(Packed({{Fingerprint(0, 0), "x"}})).ok());
  }
  ASSERT_TRUE(GraphSpool::Remove(dir).ok());
  EXPECT_FALSE(std::ifstream(dir + "/bucket-000").good());
  EXPECT_TRUE(GraphSpool::Remove(dir).ok()) << "removing an absent spool";
}

}  // namespace
}  // namespace taso::rules_db
