// After the search: fuses every bias add and activation the search left
// beside a convolution (or an activation beside a matmul) into it, one
// rewrite at a time, keeping each only when the graph's cost does not rise.
// A search stopped by its time limit may not have reached them all, and on
// every backend we measure a fused epilogue is cheaper than a second pass
// over the output; the cost check keeps that a measured claim.
#ifndef TASO_OPTIMIZER_PASSES_EPILOGUE_FUSION_H_
#define TASO_OPTIMIZER_PASSES_EPILOGUE_FUSION_H_

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/passes/passes.h"

namespace taso::optimizer {

absl::StatusOr<PassResult> FuseEpilogues(const Graph& graph, CostModel& cost);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_EPILOGUE_FUSION_H_
