// What the hash store's files share about its on-disk format (hash_store.cc,
// hash_store_finalize.cc); not for use outside them.
#ifndef TASO_RULES_DB_HASH_STORE_INTERNAL_H_
#define TASO_RULES_DB_HASH_STORE_INTERNAL_H_

#include <cstdint>
#include <string>

namespace taso::rules_db::internal {

// Column family names: part of the on-disk format.
inline constexpr char kGraphsFamily[] = "graphs";
inline constexpr char kClassesFamily[] = "classes";

// A big-endian 4-byte key part, so keys sort by the number.
inline std::string U32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  return s;
}

}  // namespace taso::rules_db::internal

#endif  // TASO_RULES_DB_HASH_STORE_INTERNAL_H_
