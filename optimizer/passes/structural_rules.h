// Rewrites the search needs that enumeration at small sizes cannot express,
// instantiated for the operator parameters a graph actually uses (rules from
// the database carry fixed parameters, e.g. SAME padding only):
//  - bias fusion: a per-channel constant added to a conv2d's output becomes
//    the conv2d's bias input;
//  - activation fusion: relu/sigmoid/tanh after a conv2d (with or without a
//    bias) or matmul without activation becomes that operator with the
//    activation (cuDNN and oneDNN fuse both into the kernel's epilogue);
//  - convolution merging: two dense convolutions reading the same tensor,
//    with the same strides and activation, whose windows line up (same
//    output size; the smaller kernel's first window starts (k2-k1)/2 later),
//    become one convolution over the concatenated (the smaller one enlarged)
//    weights, split by output channel. This covers TASO's enlarge-and-merge
//    for explicit padding and any stride, which the SAME-only generated rules
//    cannot express; biases, when both have one, are concatenated too. These
//    hold at the shapes they were made for, so they match those shapes only
//    (RewriteRule::exact_variable_types). Merges are made for each form a
//    convolution may take once its bias and activation are fused, since the
//    search cannot make new rules.
//  - merging grouped convolutions: a convolution with G groups becomes one
//    with G/k groups over a block-diagonal weight (merge_gconv), k a power of
//    two dividing G, at the shapes it was made for.
// Their correctness follows from the operators' definitions (an activation
// parameter applies the activation to the result; a zero-padded kernel
// whose window starts earlier by the padding computes the same sums), and
// the optimizer's numerical check backs every use.
#ifndef TASO_OPTIMIZER_PASSES_STRUCTURAL_RULES_H_
#define TASO_OPTIMIZER_PASSES_STRUCTURAL_RULES_H_

#include <vector>

#include "core/graph.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// Bias and activation fusions for the operators of `graph`, including an
// activation after a bias add (fusable once the bias is).
std::vector<RewriteRule> FusionRewrites(const Graph& graph);
// The fusions, the convolution merges and the matmul rewrites
// (matmul_rules.h).
std::vector<RewriteRule> StructuralRewrites(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_STRUCTURAL_RULES_H_
