// Packed graph records (GraphBatch.packed, records/packed_records.h) and
// the graph encodings inside them (records/encoding.h), as a store reads
// them from any generator: any bytes split into records or get an error,
// and every encoding parses or decodes against TASO's default spec, or
// gets an error.
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "records/encoding.h"
#include "records/packed_records.h"
#include "records/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const taso::records::Spec spec = taso::records::DefaultSpec();
  const std::string_view packed(reinterpret_cast<const char*>(data), size);
  size_t bytes = 0;
  absl::Status s = taso::records::ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
    FUZZ_CHECK(fingerprint.size() == taso::records::kFingerprintBytes, "a fingerprint of the wrong size");
    FUZZ_CHECK(!encoding.empty(), "an empty encoding");
    bytes += fingerprint.size() + 1 + encoding.size();
    (void)taso::records::ParseEncoding(encoding);
    if (auto g = taso::records::DecodeGraph(spec, encoding); g.ok()) {
      FUZZ_CHECK(g->Validate().ok(), "a decoded graph is not valid");
    }
  });
  FUZZ_CHECK(!s.ok() || bytes == size, "the records do not cover the batch");
  return 0;
}
