// Rewrites for matrix multiplications that remove work on CPUs, made for the
// ranks, activations and shapes a graph uses (part of StructuralRewrites):
//  - shared-input merging: matmul_P(x, w1), ..., matmul_P(x, wk) with
//    constant w1..wk => splits of matmul_P(x, concat(w1, ..., wk)) along the
//    output axis, for k = 2, 4, 8, 16 and the number of such matmuls x has
//    (one rule with k roots joined on x); for all of them also with one
//    k-way split of explicit sizes (at the graph's dims), as a hand merge
//    writes it, which the k-way add and bias rules below take in one step
//    where a chain of two-way splits takes k-1. The merged weight is computed from
//    weights only, so it is a constant itself and merges again (backtracking
//    composes pairs into any count). The roots are interchangeable
//    (RewriteRule::symmetric_outputs: each set is matched in one order) and
//    eqsat runs merges of more than two in one round (RewriteRule::
//    eqsat_rounds: more would merge merged matmuls every way). Shape-generic (any dims of those
//    ranks); shape inference checks each application.
//  - shared-weight batching: matmul_P(x1, w), ..., matmul_P(xk, w) with one
//    constant w and inputs that do not depend on one another's products
//    => parts of matmul_P(concat(x1, ..., xk), w) split along the rows: an
//    unrolled RNN's input products, one row each, become one matrix product
//    that reads w once. Made for k = 2, 4, 8, 16 and the number of such
//    independent matmuls (also sized, at the graph's dims); both searches
//    refuse matches that would be cyclic (a later step's h depends on an
//    earlier step's product).
//  - bias adds after such a split: ewadd(s0, c1), ewadd(s1, c2) with
//    (s0, s1) = split(y) and constant per-column c1, c2
//    => split[sizes](ewadd(y, concat(c1, c2))), so MatMul+Add pairs become
//    one MatMul+Add and a split (Gemm-style bias). The split of the sum has
//    explicit sizes (a broadcast add keeps no concat record), so these hold
//    at the sizes they were made for: every split of the widths of one
//    input's biased matmuls into two groups; also with the split's sizes
//    explicit (as these rules leave it), so a chain of splits moves its adds
//    up level by level, and for adds after sums of two matmuls (RNN gates).
//  - adds of two splits' parts: ewadd(y0, z0), ewadd(y1, z1) with
//    (y0, y1) = split(y), (z0, z1) = split(z) => split[sizes](ewadd(y, z)),
//    made where the graph adds a matmul of one input to a matmul of another
//    (an RNN gate's x_t and h_{t-1} terms): once both inputs' matmuls are
//    merged, one add of the merged results replaces one per gate.
//  - transpose folding: matmul(transpose(x), y) with the last two axes
//    swapped by a copy => the same with a strides-only transpose (a view),
//    on either operand: the matmul reads x column-major. A constant operand's
//    view is materialised by constant folding.
#ifndef TASO_OPTIMIZER_PASSES_MATMUL_RULES_H_
#define TASO_OPTIMIZER_PASSES_MATMUL_RULES_H_

#include <vector>

#include "core/graph.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

std::vector<RewriteRule> MatMulRewrites(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_MATMUL_RULES_H_
