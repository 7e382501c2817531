// Packed graph records (GraphBatch.packed, records/packed_records.h) and
// the graph encodings inside them (records/encoding.h), as a store reads
// them from any generator: any bytes split into records or get an error,
// and every encoding parses or decodes against TASO's default spec, or
// gets an error. Grouping by bucket (as a generator does) and sorting (as the
// store's finalization does) accept exactly the batches that split; grouping
// keeps every record, buckets in order and each bucket in batch order;
// sorting puts them in the store's key order.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "records/encoding.h"
#include "records/packed_records.h"
#include "records/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const taso::records::Spec spec = taso::records::DefaultSpec();
  const std::string_view packed(reinterpret_cast<const char*>(data), size);
  size_t bytes = 0;
  std::vector<std::string> keys;  // as the store keys them, less the job prefix
  absl::Status s = taso::records::ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
    FUZZ_CHECK(fingerprint.size() == taso::records::kFingerprintBytes, "a fingerprint of the wrong size");
    FUZZ_CHECK(!encoding.empty(), "an empty encoding");
    bytes += fingerprint.size() + 1 + encoding.size();
    keys.push_back(std::string(fingerprint) + std::string(encoding));
    (void)taso::records::ParseEncoding(encoding);
    if (auto g = taso::records::DecodeGraph(spec, encoding); g.ok()) {
      FUZZ_CHECK(g->Validate().ok(), "a decoded graph is not valid");
    }
  });
  FUZZ_CHECK(!s.ok() || bytes == size, "the records do not cover the batch");

  std::vector<std::string> grouped_expected;
  {
    std::vector<std::vector<std::string>> by_bucket(taso::records::kFingerprintBuckets);
    for (const std::string& k : keys) by_bucket[taso::records::FingerprintBucket(k)].push_back(k);
    for (const auto& b : by_bucket) grouped_expected.insert(grouped_expected.end(), b.begin(), b.end());
  }
  std::string grouped;
  absl::Status group = taso::records::GroupPackedRecordsInto(packed, grouped);
  FUZZ_CHECK(group.ok() == s.ok(), "grouping and splitting disagree on a batch");
  if (group.ok()) {
    std::vector<std::string> grouped_keys;
    (void)taso::records::ForEachPackedRecord(grouped, [&](std::string_view fingerprint, std::string_view encoding) {
      grouped_keys.push_back(std::string(fingerprint) + std::string(encoding));
    });
    FUZZ_CHECK(grouped.size() == size && grouped_keys == grouped_expected,
               "grouping lost, changed or misordered a record");
  }

  std::vector<taso::records::PackedRecordRef> refs;
  absl::Status sort = taso::records::SortPackedRecords(packed, refs);
  FUZZ_CHECK(sort.ok() == s.ok(), "sorting and splitting disagree on a batch");
  if (sort.ok()) {
    std::vector<std::string> sorted_keys;
    size_t sorted_bytes = 0;
    for (const taso::records::PackedRecordRef& r : refs) {
      const std::string_view record = r.In(packed);
      sorted_bytes += record.size();
      sorted_keys.push_back(std::string(record.substr(0, taso::records::kFingerprintBytes)) +
                            std::string(record.substr(taso::records::kFingerprintBytes + 1)));
    }
    std::sort(keys.begin(), keys.end());
    FUZZ_CHECK(sorted_bytes == size && sorted_keys == keys, "sorting lost, changed or misordered a record");
  }
  return 0;
}
