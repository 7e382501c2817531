// Operator signatures as text (`taso profile measure SIG`,
// costs/signature_text.h): any text parses or gets an error; a parsed
// signature that canonicalizes has a key that parses to the same key.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "costs/signature.h"
#include "costs/signature_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  auto sig = taso::profiler::ParseSignature(std::string(reinterpret_cast<const char*>(data), size));
  if (!sig.ok()) return 0;
  auto canonical = taso::profiler::Canonicalize(*sig);
  if (!canonical.ok()) return 0;
  auto again = taso::profiler::ParseSignature(canonical->key);
  FUZZ_CHECK(again.ok(), "a canonical key does not parse");
  auto canonical_again = taso::profiler::Canonicalize(*again);
  FUZZ_CHECK(canonical_again.ok() && canonical_again->key == canonical->key, "a canonical key is not stable");
  return 0;
}
