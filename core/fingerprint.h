// Fingerprints of evaluated graphs, as in TASO's generator: a per-output hash
// over (shape, layout, split info, values), then a hash over the outputs that
// does not depend on their order. Equal fingerprints make a candidate pair;
// they prove nothing.
#ifndef TASO_CORE_FINGERPRINT_H_
#define TASO_CORE_FINGERPRINT_H_

#include <vector>

#include "core/hash.h"
#include "core/interpreter.h"

namespace taso {

using Fingerprint = Hash128;

// hash1: one output tensor.
Fingerprint TensorFingerprint(const IntTensor& tensor);

// hash2: symmetric in its arguments (sorted before combining), so permuting a
// graph's outputs leaves it unchanged. Repeated outputs count repeatedly.
Fingerprint CombineOutputFingerprints(std::vector<Fingerprint> per_output);

Fingerprint GraphFingerprint(const std::vector<IntTensor>& outputs);

}  // namespace taso

#endif  // TASO_CORE_FINGERPRINT_H_
