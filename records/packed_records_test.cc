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

TEST(SortPackedRecordsInto, PutsRecordsInTheStoresKeyOrderAndKeepsEveryOne) {
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
  std::string sorted = "left from the last batch";
  ASSERT_TRUE(SortPackedRecordsInto(packed, sorted).ok());
  EXPECT_EQ(sorted.size(), packed.size());
  EXPECT_EQ(StoreKeys(sorted), expected);
}

TEST(SortPackedRecordsInto, ComparesEncodingsNotTheirLengthBytes) {
  const std::string fp(kFingerprintBytes, 'f');
  std::string packed;
  AppendPackedRecord(fp, "b", packed);    // length byte 1
  AppendPackedRecord(fp, "ab", packed);   // length byte 2, but "ab" < "b"
  AppendPackedRecord(fp, "a", packed);    // a prefix comes first
  std::string sorted;
  ASSERT_TRUE(SortPackedRecordsInto(packed, sorted).ok());
  EXPECT_EQ(StoreKeys(sorted), (std::vector<std::string>{fp + "a", fp + "ab", fp + "b"}));
}

TEST(SortPackedRecordsInto, RefusesAMalformedBatchAndLeavesTheOutputAlone) {
  std::string packed;
  AppendPackedRecord(std::string(kFingerprintBytes, 'z'), "x", packed);
  AppendPackedRecord(std::string(kFingerprintBytes, 'a'), "y", packed);
  packed.pop_back();  // the last record is truncated
  std::string sorted = "kept";
  absl::Status s = SortPackedRecordsInto(packed, sorted);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sorted, "kept");
}

TEST(SortPackedRecordsInto, AcceptsAnEmptyBatch) {
  std::string sorted = "left from the last batch";
  EXPECT_TRUE(SortPackedRecordsInto("", sorted).ok());
  EXPECT_TRUE(sorted.empty());
}

}  // namespace
}  // namespace taso::records
