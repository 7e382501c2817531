// Deterministic input values for every graph input and weight, derived from a
// seed and the tensor's name only, so every process (generator shards, the
// store's re-check) computes the same values without talking to each other.
#ifndef TASO_CORE_RANDOM_INPUTS_H_
#define TASO_CORE_RANDOM_INPUTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/graph.h"
#include "core/interpreter.h"

namespace taso {

// splitmix64: a tiny, well-mixed stream seeded from (seed, name), the source
// of every deterministic value here and of callers' own random choices.
class RandomStream {
 public:
  RandomStream(const std::string& name, uint64_t seed);
  uint64_t Next();
  // Uniform in [0, n) for n >= 1 (the modulo bias is below 2^-40 for small n).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

// Uniform over all int32 values.
IntTensor DeterministicIntTensor(const TensorType& type, const std::string& name, uint64_t seed);
// Uniform in [-1, 1].
FloatTensor DeterministicFloatTensor(const TensorType& type, const std::string& name, uint64_t seed);

// Feeds for every input and weight of `graph` (weights with data included).
std::map<std::string, IntTensor> DeterministicIntFeeds(const Graph& graph, uint64_t seed);
std::map<std::string, FloatTensor> DeterministicFloatFeeds(const Graph& graph, uint64_t seed);

}  // namespace taso

#endif  // TASO_CORE_RANDOM_INPUTS_H_
