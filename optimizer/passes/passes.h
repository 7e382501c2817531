// Whole-graph transformations around the search, for inference:
//  - FoldBatchNorm: a batch normalization after a convolution (optionally
//    after its bias add) becomes new convolution weights and a bias, when the
//    weights and statistics carry values (as in an ONNX model).
//  - FoldConstants: every value computed from weights only (TASO's weight
//    subgraphs: concatenated, enlarged, merged weights) is computed once and
//    stored as a weight, as TASO does after its search.
// Both leave a graph unchanged where weights carry no values.
//  - FlattenSplits: a split of a split's part along the same axis (what k-1
//    two-way splits undoing a k-way concat leave, e.g. after a shared-input
//    matmul merge) becomes one split with explicit sizes. Our runner takes
//    split parts as views, but a runtime copies every split's outputs (ONNX
//    Runtime's Split is a copy kernel), so a chain copies the inner parts
//    once per level; one split copies each once.
//  - RemoveTransposePairs: a transpose of a transpose whose permutations
//    compose to the identity is its innermost input. Rewrites the search
//    finds equal or cheaper by a noisy cost leave such pairs (a matmul
//    reading transpose(transpose(x)), priced as one reading a transposed
//    view); ONNX Runtime cancels them when it loads the model, so the
//    exported graph, and its predicted cost, should be what it runs.
#ifndef TASO_OPTIMIZER_PASSES_PASSES_H_
#define TASO_OPTIMIZER_PASSES_PASSES_H_

#include "absl/status/statusor.h"
#include "core/graph.h"

namespace taso::optimizer {

struct PassResult {
  Graph graph;
  int changed = 0;  // batch norms folded / values precomputed
};

absl::StatusOr<PassResult> FoldBatchNorm(const Graph& graph);
absl::StatusOr<PassResult> FoldConstants(const Graph& graph);
absl::StatusOr<PassResult> FlattenSplits(const Graph& graph);  // changed = splits removed
absl::StatusOr<PassResult> RemoveTransposePairs(const Graph& graph);  // changed = pairs removed

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_PASSES_H_
