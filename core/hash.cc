#include "core/hash.h"

#include "absl/strings/str_format.h"

namespace taso {

std::string Hash128::ToHex() const { return absl::StrFormat("%016x%016x", hi, lo); }

std::string Hash128::ToBytes() const {
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(hi >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(lo >> (56 - 8 * i));
  }
  return out;
}

void Hasher::AddString(std::string_view s) {
  Add(s.size());
  uint64_t word = 0;
  int filled = 0;
  for (unsigned char c : s) {
    word = (word << 8) | c;
    if (++filled == 8) {
      Add(word);
      word = 0;
      filled = 0;
    }
  }
  if (filled > 0) Add(word);
}

}  // namespace taso
