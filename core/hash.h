// Small, fast, non-cryptographic hashing used for fingerprints and structural
// hashes. Deterministic across runs and machines (no seeds from the process).
#ifndef TASO_CORE_HASH_H_
#define TASO_CORE_HASH_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace taso {

// Murmur3's 64-bit finalizer: full avalanche of a 64-bit word.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// A 128-bit value: fingerprints are this wide so that billions of graphs
// (size-4 generation) do not collide by chance.
struct Hash128 {
  uint64_t hi = 0;
  uint64_t lo = 0;

  friend bool operator==(const Hash128& a, const Hash128& b) { return a.hi == b.hi && a.lo == b.lo; }
  friend bool operator!=(const Hash128& a, const Hash128& b) { return !(a == b); }
  friend bool operator<(const Hash128& a, const Hash128& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  }
  std::string ToHex() const;
  // 16 big-endian bytes, so byte order equals numeric order (useful as a key).
  std::string ToBytes() const;
};

// For hash maps keyed by a Hash128 (its bits are already mixed).
struct Hash128Hasher {
  size_t operator()(const Hash128& h) const { return static_cast<size_t>(h.lo ^ (h.hi * 0x9e3779b97f4a7c15ULL)); }
};

// Streaming hasher with two independent 64-bit lanes. Order-sensitive.
class Hasher {
 public:
  Hasher() = default;
  explicit Hasher(uint64_t domain) { Add(domain); }

  void Add(uint64_t v) {
    a_ = (a_ ^ Mix64(v + 0x9e3779b97f4a7c15ULL)) * 0x100000001b3ULL;
    b_ = ((b_ + v) * 0xd6e8feb86659fd93ULL);
    b_ ^= b_ >> 29;
    ++n_;
  }
  void AddSigned(int64_t v) { Add(static_cast<uint64_t>(v)); }
  void AddString(std::string_view s);
  void Add(const Hash128& h) {
    Add(h.hi);
    Add(h.lo);
  }

  Hash128 Finish() const {
    Hash128 h;
    h.hi = Mix64(a_ ^ Mix64(n_));
    h.lo = Mix64(b_ + 0x632be59bd9b4e019ULL * (n_ + 1));
    return h;
  }

 private:
  uint64_t a_ = 0xcbf29ce484222325ULL;
  uint64_t b_ = 0x84222325cbf29ce4ULL;
  uint64_t n_ = 0;
};

}  // namespace taso

#endif  // TASO_CORE_HASH_H_
