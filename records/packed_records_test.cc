#include "records/packed_records.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace taso::records {
namespace {

// The store's key for a record, less the job prefix all keys share.
std::vector<std::string> StoreKeys(const std::string& packed) {
  std::vector<std::string> keys;
  EXPECT_TRUE(ForEachPackedRecord(packed, [&](std::string_view fp, std::string_view encoding) {
                keys.push_back(std::string(fp) + std::string(encoding));
              }).ok());
  return keys;
}

std::string Fingerprint(std::mt19937_64& rng, int shared_head_bytes) {
  std::string fp(kFingerprintBytes, '\0');
  for (int i = 0; i < kFingerprintBytes; ++i) fp[i] = static_cast<char>(i < shared_head_bytes ? 7 : rng());
  return fp;
}

// The records of `packed` in the order SortPackedRecords gives.
std::string Sorted(const std::string& packed) {
  std::vector<PackedRecordRef> refs;
  EXPECT_TRUE(SortPackedRecords(packed, refs).ok());
  std::string out;
  for (const PackedRecordRef& r : refs) out.append(r.In(packed));
  return out;
}

TEST(SortPackedRecords, PutsRecordsInTheStoresKeyOrderAndKeepsEveryOne) {
  std::mt19937_64 rng(42);
  std::string packed;
  for (int i = 0; i < 3000; ++i) {
    // Some fingerprints share their first 8 or all 16 bytes, so every part of the comparison is used.
    const int shared = i % 3 == 0 ? kFingerprintBytes : i % 3 == 1 ? 8 : 0;
    std::string encoding(1 + rng() % 20, '\0');
    for (char& c : encoding) c = static_cast<char>(rng() % 4);
    AppendPackedRecord(Fingerprint(rng, shared), encoding, packed);
  }
  std::vector<std::string> expected = StoreKeys(packed);
  std::sort(expected.begin(), expected.end());
  ASSERT_FALSE(StoreKeys(packed) == expected);  // the input was not sorted already
  const std::string sorted = Sorted(packed);
  EXPECT_EQ(sorted.size(), packed.size());
  EXPECT_EQ(StoreKeys(sorted), expected);
}

TEST(SortPackedRecords, ComparesEncodingsNotTheirLengthBytes) {
  const std::string fp(kFingerprintBytes, 'f');
  std::string packed;
  AppendPackedRecord(fp, "b", packed);    // length byte 1
  AppendPackedRecord(fp, "ab", packed);   // length byte 2, but "ab" < "b"
  AppendPackedRecord(fp, "a", packed);    // a prefix comes first
  EXPECT_EQ(StoreKeys(Sorted(packed)), (std::vector<std::string>{fp + "a", fp + "ab", fp + "b"}));
}

TEST(SortPackedRecords, RefusesAMalformedBuffer) {
  std::string packed;
  AppendPackedRecord(std::string(kFingerprintBytes, 'z'), "x", packed);
  packed.pop_back();
  std::vector<PackedRecordRef> refs;
  EXPECT_EQ(SortPackedRecords(packed, refs).code(), absl::StatusCode::kInvalidArgument);
}

TEST(GroupPackedRecordsInto, GroupsByBucketInBucketOrderKeepingTheBatchOrderWithinEach) {
  std::mt19937_64 rng(7);
  std::string packed;
  std::vector<std::vector<std::string>> by_bucket(kFingerprintBuckets);
  for (int i = 0; i < 3000; ++i) {
    std::string fp = Fingerprint(rng, 0);
    fp[0] = static_cast<char>(rng() % 5);  // few buckets, many records in each
    const std::string encoding = std::to_string(i);
    AppendPackedRecord(fp, encoding, packed);
    by_bucket[FingerprintBucket(fp)].push_back(fp + encoding);
  }
  std::vector<std::string> expected;
  for (const auto& bucket : by_bucket) expected.insert(expected.end(), bucket.begin(), bucket.end());
  std::string grouped = "left from the last batch";
  ASSERT_TRUE(GroupPackedRecordsInto(packed, grouped).ok());
  EXPECT_EQ(grouped.size(), packed.size());
  EXPECT_EQ(StoreKeys(grouped), expected);
}

TEST(GroupPackedRecordsInto, RefusesAMalformedBatchAndLeavesTheOutputAlone) {
  std::string packed;
  AppendPackedRecord(std::string(kFingerprintBytes, 'z'), "x", packed);
  AppendPackedRecord(std::string(kFingerprintBytes, 'a'), "y", packed);
  packed.pop_back();  // the last record is truncated
  std::string grouped = "kept";
  absl::Status s = GroupPackedRecordsInto(packed, grouped);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(grouped, "kept");
}

TEST(GroupPackedRecordsInto, AcceptsAnEmptyBatch) {
  std::string grouped = "left from the last batch";
  EXPECT_TRUE(GroupPackedRecordsInto("", grouped).ok());
  EXPECT_TRUE(grouped.empty());
}

}  // namespace
}  // namespace taso::records
