// Helpers extract.cc (greedy, problems) and extract_ilp.cc (the ILP) share;
// not part of the optimizer's interface.
#ifndef TASO_OPTIMIZER_EQSAT_EXTRACT_INTERNAL_H_
#define TASO_OPTIMIZER_EQSAT_EXTRACT_INTERNAL_H_

#include <cstddef>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "optimizer/eqsat/extract.h"

namespace taso::optimizer::extract_internal {

// Strongly connected components of a directed graph given by adjacency lists
// (iterative Tarjan, so deep graphs do not exhaust the stack): a component
// number per vertex.
std::vector<int> StronglyConnectedComponents(const std::vector<std::vector<int>>& adj);

// The classes the roots need under `pick` (per class: an e-node or -1),
// following chosen e-nodes' children; every other class's pick becomes -1.
// NotFound when a needed class has none.
absl::Status RestrictPick(const ExtractionProblem& p, std::vector<int>& pick);

// RestrictPick, and whether the result has no cycle: a choice the roots can
// be built from.
bool RestrictAcyclic(const ExtractionProblem& p, std::vector<int>& pick);

// The picked e-nodes' costs, each counted once.
double PickCost(const ExtractionProblem& p, const std::vector<int>& pick);

// Greedy over the e-nodes where `usable` (all when empty), with `cost` in
// place of the e-nodes' costs: per class, the pick of least tree cost.
std::vector<int> GreedyPick(const ExtractionProblem& p, const std::vector<double>& cost,
                            const std::vector<bool>& usable);

// Cycles the picks of the needed classes form, each as its classes in order
// (each one's pick reads the next, the last's reads the first), at most `limit`.
std::vector<std::vector<int>> FindCycles(const ExtractionProblem& p, const std::vector<int>& pick,
                                         size_t limit = std::numeric_limits<size_t>::max());

}  // namespace taso::optimizer::extract_internal

#endif  // TASO_OPTIMIZER_EQSAT_EXTRACT_INTERNAL_H_
