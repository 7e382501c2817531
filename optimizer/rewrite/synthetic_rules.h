// Many made-up rewrites for measuring and testing how matching scales with
// the number of rules: patterns of 1-4 operators (relu, tanh, sigmoid, add,
// mul, matmul) over 4x4 tensors, some with two outputs. Each rewrite's right
// side is its left side: only matching is exercised.
#ifndef TASO_OPTIMIZER_REWRITE_SYNTHETIC_RULES_H_
#define TASO_OPTIMIZER_REWRITE_SYNTHETIC_RULES_H_

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// `count` rules, the same for the same seed.
std::vector<RewriteRule> SyntheticRules(int count, uint32_t seed = 1);

// A small graph of 4x4 tensors with relus, adds and matmuls (no tanh,
// sigmoid or mul), and a pair of matmuls sharing an input.
Graph SyntheticRulesHost();

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_SYNTHETIC_RULES_H_
