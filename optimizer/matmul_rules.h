// Rewrites for matrix multiplications that remove work on CPUs, made for the
// ranks, activations and shapes a graph uses (part of StructuralRewrites):
//  - shared-input merging: matmul_P(x, w1), matmul_P(x, w2) with constant
//    w1, w2 => split(matmul_P(x, concat(w1, w2))) along the output axis. The
//    merged weight is computed from weights only, so it is a constant itself
//    and merges again: pairs compose into 3 (Q/K/V), 4 (LSTM gates) or 8
//    (NAS-RNN) matmuls over one weight. Shape-generic (any dims of those
//    ranks); shape inference checks each application.
//  - bias adds after such a split: ewadd(s0, c1), ewadd(s1, c2) with
//    (s0, s1) = split(y) and constant per-column c1, c2
//    => split[sizes](ewadd(y, concat(c1, c2))), so MatMul+Add pairs become
//    one MatMul+Add and a split (Gemm-style bias). The split of the sum has
//    explicit sizes (a broadcast add keeps no concat record), so these hold
//    at the sizes they were made for: every split of the widths of one
//    input's biased matmuls into two groups.
//  - transpose folding: matmul(transpose(x), y) with the last two axes
//    swapped by a copy => the same with a strides-only transpose (a view),
//    on either operand: the matmul reads x column-major. A constant operand's
//    view is materialised by constant folding.
#ifndef TASO_OPTIMIZER_MATMUL_RULES_H_
#define TASO_OPTIMIZER_MATMUL_RULES_H_

#include <vector>

#include "core/graph.h"
#include "optimizer/rewrite_rule.h"

namespace taso::optimizer {

std::vector<RewriteRule> MatMulRewrites(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_MATMUL_RULES_H_
