#include "core/fingerprint.h"

#include <algorithm>

namespace taso {

Fingerprint TensorFingerprint(const IntTensor& tensor) {
  Hasher h(0x7461736f31ULL);  // domain tag: per-tensor hash
  tensor.type.HashInto(h);
  h.Add(tensor.data.size());
  // Two values per step: this loop is most of the generator's hashing time.
  const size_t n = tensor.data.size();
  size_t i = 0;
  for (; i + 1 < n; i += 2) {
    h.Add(static_cast<uint64_t>(static_cast<uint32_t>(tensor.data[i])) |
          (static_cast<uint64_t>(static_cast<uint32_t>(tensor.data[i + 1])) << 32));
  }
  if (i < n) h.Add(static_cast<uint32_t>(tensor.data[i]));
  return h.Finish();
}

Fingerprint CombineOutputFingerprints(std::vector<Fingerprint> per_output) {
  std::sort(per_output.begin(), per_output.end());
  Hasher h(0x7461736f32ULL);  // domain tag: per-graph hash
  h.Add(per_output.size());
  for (const Fingerprint& f : per_output) h.Add(f);
  return h.Finish();
}

Fingerprint GraphFingerprint(const std::vector<IntTensor>& outputs) {
  std::vector<Fingerprint> parts;
  parts.reserve(outputs.size());
  for (const IntTensor& t : outputs) parts.push_back(TensorFingerprint(t));
  return CombineOutputFingerprints(std::move(parts));
}

}  // namespace taso
