#include "core/random_inputs.h"

#include "core/hash.h"

namespace taso {

RandomStream::RandomStream(const std::string& name, uint64_t seed) {
  Hasher h(seed);
  h.AddString(name);
  state_ = h.Finish().lo;
}

uint64_t RandomStream::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

IntTensor DeterministicIntTensor(const TensorType& type, const std::string& name, uint64_t seed) {
  IntTensor t{type, {}};
  RandomStream s(name, seed);
  t.data.resize(type.num_elements());
  for (int32_t& v : t.data) v = static_cast<int32_t>(static_cast<uint32_t>(s.Next()));
  return t;
}

FloatTensor DeterministicFloatTensor(const TensorType& type, const std::string& name, uint64_t seed) {
  FloatTensor t{type, {}};
  RandomStream s(name, seed);
  t.data.resize(type.num_elements());
  for (float& v : t.data) v = static_cast<float>(static_cast<double>(s.Next() >> 11) * 0x1.0p-52 - 1.0);
  return t;
}

std::map<std::string, IntTensor> DeterministicIntFeeds(const Graph& graph, uint64_t seed) {
  std::map<std::string, IntTensor> feeds;
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) {
      feeds[n.name] = DeterministicIntTensor(n.output_types[0], n.name, seed);
    }
  }
  return feeds;
}

std::map<std::string, FloatTensor> DeterministicFloatFeeds(const Graph& graph, uint64_t seed) {
  std::map<std::string, FloatTensor> feeds;
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) {
      feeds[n.name] = DeterministicFloatTensor(n.output_types[0], n.name, seed);
    }
  }
  return feeds;
}

}  // namespace taso
