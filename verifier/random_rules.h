// Random rules for testing and measuring the pruner at scale (testonly):
// two sides of up to `max_ops` element-wise operators, relu and matmul over
// three variables of each of two types, so that many are renamings,
// instances, reversals or common sub/supergraphs of others. Not true
// equalities: the pruner never asks whether a rule holds, only whether it
// follows from others. Statuses: mostly proved, some pruned (as a per-shard
// pass leaves them) and some unknown, unless `all_proved`.
#ifndef TASO_VERIFIER_RANDOM_RULES_H_
#define TASO_VERIFIER_RANDOM_RULES_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/graph.h"
#include "proto/rules.pb.h"

namespace taso::verifier {

class RandomRules {
 public:
  explicit RandomRules(uint32_t seed, int max_ops = 3, bool all_proved = false)
      : rng_(seed), max_ops_(max_ops), all_proved_(all_proved) {}

  // `count` rules with distinct ids.
  std::vector<rules::Rule> Make(int count);
  rules::Rule Next(int index);

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  TensorRef Var(Graph& g, std::map<std::string, TensorRef>& vars, bool square);
  TensorRef Expr(Graph& g, std::map<std::string, TensorRef>& vars, int ops, bool square);

  std::mt19937 rng_;
  int max_ops_;
  bool all_proved_;
};

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_RANDOM_RULES_H_
