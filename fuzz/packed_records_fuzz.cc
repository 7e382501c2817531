// Packed graph records (GraphBatch.packed, records/packed_records.h) and
// the graph encodings inside them (records/encoding.h), as a store reads
// them from any generator: any bytes split into records or get an error,
// and every encoding parses or decodes against TASO's default spec, or
// gets an error. Sorting (as a generator does) accepts exactly the batches
// that split, keeps every record and puts them in the store's key order.
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

  std::string sorted;
  absl::Status sort = taso::records::SortPackedRecordsInto(packed, sorted);
  FUZZ_CHECK(sort.ok() == s.ok(), "sorting and splitting disagree on a batch");
  if (sort.ok()) {
    std::vector<std::string> sorted_keys;
    (void)taso::records::ForEachPackedRecord(sorted, [&](std::string_view fingerprint, std::string_view encoding) {
      sorted_keys.push_back(std::string(fingerprint) + std::string(encoding));
    });
    std::sort(keys.begin(), keys.end());
    FUZZ_CHECK(sorted.size() == size && sorted_keys == keys, "sorting lost, changed or misordered a record");
  }
  return 0;
}
