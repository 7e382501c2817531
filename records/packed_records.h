// The record layout inside GraphBatch.packed, shared by the generator (which
// writes it) and the store (which reads it): a 16-byte fingerprint, one
// length byte, then that many bytes of graph encoding, repeated.
#ifndef TASO_RECORDS_PACKED_RECORDS_H_
#define TASO_RECORDS_PACKED_RECORDS_H_

#include <string>
#include <string_view>

namespace taso::records {

inline constexpr int kFingerprintBytes = 16;

inline void AppendPackedRecord(const std::string& fingerprint_bytes, std::string_view encoding, std::string& out) {
  out.append(fingerprint_bytes);
  out.push_back(static_cast<char>(encoding.size()));
  out.append(encoding.data(), encoding.size());
}

}  // namespace taso::records

#endif  // TASO_RECORDS_PACKED_RECORDS_H_
