// Whole-graph transformations around the search, for inference:
//  - FoldBatchNorm: a batch normalization after a convolution (optionally
//    after its bias add) becomes new convolution weights and a bias, when the
//    weights and statistics carry values (as in an ONNX model).
//  - FoldConstants: every value computed from weights only (TASO's weight
//    subgraphs: concatenated, enlarged, merged weights) is computed once and
//    stored as a weight, as TASO does after its search.
// Both leave a graph unchanged where weights carry no values.
#ifndef TASO_OPTIMIZER_PASSES_H_
#define TASO_OPTIMIZER_PASSES_H_

#include "absl/status/statusor.h"
#include "core/graph.h"

namespace taso::optimizer {

struct PassResult {
  Graph graph;
  int changed = 0;  // batch norms folded / values precomputed
};

absl::StatusOr<PassResult> FoldBatchNorm(const Graph& graph);
absl::StatusOr<PassResult> FoldConstants(const Graph& graph);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_H_
