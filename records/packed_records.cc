#include "records/packed_records.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace taso::records {
namespace {

struct Record {
  uint64_t head;   // the fingerprint's first 8 bytes, big-endian: decides almost every comparison
  uint32_t start;  // of the record in the batch
  uint32_t size;   // of the whole record, fingerprint and length byte included
};

uint64_t BigEndianHead(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

absl::Status SortPackedRecordsInto(std::string_view packed, std::string& out) {
  if (packed.size() > UINT32_MAX) return absl::InvalidArgumentError("packed batch over 4 GiB");
  std::vector<Record> records;
  records.reserve(packed.size() / (kFingerprintBytes + 8));
  const char* base = packed.data();
  absl::Status parsed = ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
    const auto start = static_cast<uint32_t>(fingerprint.data() - base);
    records.push_back({BigEndianHead(fingerprint.data()), start,
                       static_cast<uint32_t>(kFingerprintBytes + 1 + encoding.size())});
  });
  if (!parsed.ok()) return parsed;
  std::sort(records.begin(), records.end(), [base](const Record& a, const Record& b) {
    if (a.head != b.head) return a.head < b.head;
    const char* pa = base + a.start;
    const char* pb = base + b.start;
    if (int c = std::memcmp(pa + 8, pb + 8, kFingerprintBytes - 8); c != 0) return c < 0;
    // The length byte is not part of the store's key: compare the encodings.
    const size_t la = a.size - kFingerprintBytes - 1, lb = b.size - kFingerprintBytes - 1;
    const int c = std::memcmp(pa + kFingerprintBytes + 1, pb + kFingerprintBytes + 1, std::min(la, lb));
    return c != 0 ? c < 0 : la < lb;
  });
  out.clear();
  out.reserve(packed.size());
  for (const Record& r : records) out.append(base + r.start, r.size);
  return absl::OkStatus();
}

}  // namespace taso::records
