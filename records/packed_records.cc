#include "records/packed_records.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace taso::records {
namespace {

uint64_t BigEndianHead(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

absl::Status SortPackedRecords(std::string_view packed, std::vector<PackedRecordRef>& records) {
  if (packed.size() > UINT32_MAX) return absl::InvalidArgumentError("packed records over 4 GiB");
  records.clear();
  records.reserve(packed.size() / (kFingerprintBytes + 8));
  const char* base = packed.data();
  absl::Status parsed = ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
    const auto start = static_cast<uint32_t>(fingerprint.data() - base);
    records.push_back({BigEndianHead(fingerprint.data()), start,
                       static_cast<uint32_t>(kFingerprintBytes + 1 + encoding.size())});
  });
  if (!parsed.ok()) return parsed;
  std::sort(records.begin(), records.end(), [base](const PackedRecordRef& a, const PackedRecordRef& b) {
    if (a.head != b.head) return a.head < b.head;
    const char* pa = base + a.start;
    const char* pb = base + b.start;
    if (int c = std::memcmp(pa + 8, pb + 8, kFingerprintBytes - 8); c != 0) return c < 0;
    // The length byte is not part of the store's key: compare the encodings.
    const size_t la = a.size - kFingerprintBytes - 1, lb = b.size - kFingerprintBytes - 1;
    const int c = std::memcmp(pa + kFingerprintBytes + 1, pb + kFingerprintBytes + 1, std::min(la, lb));
    return c != 0 ? c < 0 : la < lb;
  });
  return absl::OkStatus();
}

absl::Status GroupPackedRecordsInto(std::string_view packed, std::string& out) {
  std::array<size_t, kFingerprintBuckets + 1> start{};  // bytes per bucket, then where each starts
  absl::Status parsed = ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
    start[FingerprintBucket(fingerprint) + 1] += kFingerprintBytes + 1 + encoding.size();
  });
  if (!parsed.ok()) return parsed;
  for (int b = 0; b < kFingerprintBuckets; ++b) start[b + 1] += start[b];
  out.resize(packed.size());
  (void)ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
    const size_t size = kFingerprintBytes + 1 + encoding.size();
    size_t& at = start[FingerprintBucket(fingerprint)];
    std::memcpy(out.data() + at, fingerprint.data(), size);
    at += size;
  });
  return absl::OkStatus();
}

}  // namespace taso::records
