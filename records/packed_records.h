// The record layout inside GraphBatch.packed, shared by the generator (which
// writes it) and the store (which reads it): a 16-byte fingerprint, one
// length byte, then that many bytes of graph encoding, repeated.
//
// Writers group a batch by fingerprint bucket (GroupPackedRecordsInto) before
// sending it: the store appends each bucket's records to a file of its own
// (rules_db/graph_spool.h), one write per bucket when they are one run. Order
// is a hint only: the store accepts a batch in any order.
#ifndef TASO_RECORDS_PACKED_RECORDS_H_
#define TASO_RECORDS_PACKED_RECORDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace taso::records {

inline constexpr int kFingerprintBytes = 16;

// A fingerprint's bucket: its first byte. Buckets in order are fingerprints
// in order.
inline constexpr int kFingerprintBuckets = 256;
inline int FingerprintBucket(std::string_view fingerprint) { return static_cast<unsigned char>(fingerprint[0]); }

// A record of a packed buffer, by place.
struct PackedRecordRef {
  uint64_t head;   // the fingerprint's first 8 bytes, big-endian: decides almost every comparison
  uint32_t start;  // of the record in the buffer
  uint32_t size;   // of the whole record, fingerprint and length byte included
  std::string_view In(std::string_view packed) const { return packed.substr(start, size); }
};

// The records of `packed` in the store's key order: by fingerprint, then by
// encoding bytes (a prefix first). InvalidArgument if `packed` is malformed
// (as ForEachPackedRecord says) or over 4 GiB.
absl::Status SortPackedRecords(std::string_view packed, std::vector<PackedRecordRef>& records);

// Writes the records of `packed` to `out` (replacing what it held) grouped
// by fingerprint bucket, buckets in order, each bucket's records in their
// order in `packed`: a counting sort, in linear time. InvalidArgument, and
// `out` unchanged, if `packed` is malformed (as ForEachPackedRecord says).
absl::Status GroupPackedRecordsInto(std::string_view packed, std::string& out);

inline void AppendPackedRecord(const std::string& fingerprint_bytes, std::string_view encoding, std::string& out) {
  out.append(fingerprint_bytes);
  out.push_back(static_cast<char>(encoding.size()));
  out.append(encoding.data(), encoding.size());
}

// Calls `f(fingerprint, encoding)` for each record of `packed`, in order;
// InvalidArgument (naming the byte) when the batch is truncated or a record
// has an empty or overlong encoding. Nothing is called for a record after a
// bad one, but records before it were: callers that must be all-or-nothing
// collect first.
template <typename F>
absl::Status ForEachPackedRecord(std::string_view packed, F f) {
  for (size_t pos = 0; pos < packed.size();) {
    if (pos + kFingerprintBytes + 1 > packed.size()) {
      return absl::InvalidArgumentError(absl::StrCat("packed batch truncated at byte ", pos));
    }
    const size_t length = static_cast<unsigned char>(packed[pos + kFingerprintBytes]);
    const size_t end = pos + kFingerprintBytes + 1 + length;
    if (end > packed.size() || length == 0) {
      return absl::InvalidArgumentError(absl::StrCat("packed record at byte ", pos, " is malformed"));
    }
    f(packed.substr(pos, kFingerprintBytes), packed.substr(pos + kFingerprintBytes + 1, length));
    pos = end;
  }
  return absl::OkStatus();
}

}  // namespace taso::records

#endif  // TASO_RECORDS_PACKED_RECORDS_H_
