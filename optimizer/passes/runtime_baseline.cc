#include "optimizer/passes/runtime_baseline.h"

#include "optimizer/passes/cse.h"
#include "optimizer/passes/epilogue_fusion.h"

namespace taso::optimizer {

absl::StatusOr<BaselineResult> RuntimeBaseline(const Graph& graph, CostModel& cost) {
  BaselineResult result;
  // Weight-only subgraphs first, so batch norms and biases computed from
  // weights are weights with values when the folds look for them.
  auto constants = FoldConstants(graph);
  if (!constants.ok()) return constants.status();
  result.constants_folded = constants->changed;
  // ONNX Runtime's basic level merges common subexpressions too (two
  // branches reading one relu of the input run it once), so that is not a
  // win of ours either.
  auto cse = EliminateCommonSubexpressions(constants->graph);
  if (!cse.ok()) return cse.status();
  result.cse_merged = cse->changed;
  auto bn = FoldBatchNorm(cse->graph);
  if (!bn.ok()) return bn.status();
  result.batchnorms_folded = bn->changed;
  auto fused = FuseEpilogues(bn->graph, cost);
  if (!fused.ok()) return fused.status();
  result.epilogues_fused = fused->changed;
  auto again = FoldConstants(fused->graph);
  if (!again.ok()) return again.status();
  result.constants_folded += again->changed;
  result.graph = std::move(again->graph);
  return result;
}

}  // namespace taso::optimizer
