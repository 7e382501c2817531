// The honest baseline: the input as a runtime executes it. Every inference
// runtime we compare against (ONNX Runtime's cpu EP from its `basic` level
// up, TensorRT, oneDNN graph) folds constants and batch norms, merges common
// subexpressions and fuses bias adds and activations into the convolution or
// matmul before them, so a
// speedup over the raw import would credit us with work the runtime does
// anyway. Speedups are reported against this graph first.
#ifndef TASO_OPTIMIZER_PASSES_RUNTIME_BASELINE_H_
#define TASO_OPTIMIZER_PASSES_RUNTIME_BASELINE_H_

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/passes/passes.h"

namespace taso::optimizer {

struct BaselineResult {
  Graph graph;
  int constants_folded = 0;
  int batchnorms_folded = 0;
  int cse_merged = 0;
  int epilogues_fused = 0;
};

// Constant folding, common-subexpression elimination, batch-norm folding, then bias and activation fusion
// (FuseEpilogues, which keeps a fusion only if `cost` does not rise), and
// constant folding again for the weights the batch-norm fold computed.
absl::StatusOr<BaselineResult> RuntimeBaseline(const Graph& graph, CostModel& cost);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_RUNTIME_BASELINE_H_
