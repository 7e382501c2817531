// Rewrites the search needs that enumeration at small sizes cannot express,
// instantiated for the operator parameters a graph actually uses (rules from
// the database carry fixed parameters, e.g. SAME padding only):
//  - activation fusion: relu/sigmoid/tanh after a conv2d or matmul without
//    activation becomes that conv2d or matmul with the activation (cuDNN and
//    oneDNN fuse it into the kernel's epilogue).
// Their correctness follows from the operators' definitions (an activation
// parameter applies the activation to the result), so they need no proof.
#ifndef TASO_OPTIMIZER_STRUCTURAL_RULES_H_
#define TASO_OPTIMIZER_STRUCTURAL_RULES_H_

#include <vector>

#include "core/graph.h"
#include "optimizer/rewrite_rule.h"

namespace taso::optimizer {

std::vector<RewriteRule> StructuralRewrites(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_STRUCTURAL_RULES_H_
