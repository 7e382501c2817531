#include "core/fingerprint.h"

#include <algorithm>

namespace taso {

Fingerprint TensorFingerprint(const IntTensor& tensor) {
  Hasher h(0x7461736f31ULL);  // domain tag: per-tensor hash
  tensor.type.HashInto(h);
  h.Add(tensor.data.size());
  for (int32_t v : tensor.data) h.Add(static_cast<uint32_t>(v));
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
