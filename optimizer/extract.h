// Choosing one e-node per needed e-class so that the chosen e-nodes form an
// acyclic program of least cost, and turning that choice into a Graph.
//
// Greedy: each class takes the e-node of least tree cost (its own cost plus
// its children's), fast but blind to sharing: a subexpression used twice is
// counted twice, so it can miss a cheaper program that shares more.
//
// ILP (CBC): a binary variable per e-node; each needed class chooses exactly
// one e-node (the outputs' classes are needed; a chosen e-node needs its
// children's classes); the objective is the sum of the chosen e-nodes' costs,
// so shared subexpressions count once. Acyclicity: e-graph cycles can only
// run inside a strongly connected component of the class graph, so only the
// classes of such components get an order variable t in [0, 1], and a chosen
// e-node inside a component forces its class's t above each child's by a
// margin (Tensat's topological-order constraints, limited to where cycles can
// occur). The greedy choice is given to CBC as its starting solution.
#ifndef TASO_OPTIMIZER_EXTRACT_H_
#define TASO_OPTIMIZER_EXTRACT_H_

#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/graph.h"
#include "optimizer/cost_model.h"
#include "optimizer/egraph.h"

namespace taso::optimizer {

// Milliseconds per e-node id, asked of the cost model in one batch: 0 for
// variables, get-items and foldable operators; +infinity for e-nodes that
// extraction must not choose: dead duplicates, e-nodes that are their own
// child (a self-loop), and e-nodes whose types inferred from their children's
// classes differ from their class's types (another layout or split record),
// so that a graph built from chosen e-nodes has exactly the types it was
// costed with.
absl::StatusOr<std::vector<double>> ENodeCosts(const EGraph& egraph, CostModel& cost);

struct Extraction {
  std::map<EClassId, ENodeId> choice;  // every class the outputs need, and only those
  double cost_ms = 0;                  // the chosen e-nodes' costs, each counted once
  bool optimal = false;                // the ILP proved nothing cheaper exists
  bool time_limited = false;           // the ILP stopped at its time limit
};

// The chosen e-nodes' costs, each counted once (what the program costs).
double ExtractionCost(const Extraction& extraction, const std::vector<double>& costs);

// NotFound when some output class has no acyclic choice of finite cost.
absl::StatusOr<Extraction> ExtractGreedy(const EGraph& egraph, const std::vector<EClassId>& roots,
                                         const std::vector<double>& costs);

// Unavailable when CBC finds no integer solution within the time limit;
// Internal when it fails otherwise. `warm_start` may be null.
absl::StatusOr<Extraction> ExtractIlp(const EGraph& egraph, const std::vector<EClassId>& roots,
                                      const std::vector<double>& costs, absl::Duration time_limit,
                                      const Extraction* warm_start = nullptr);

// The program of the choice: every input of `original` (same names, types
// and order), the weights it reads, and `original`'s outputs (same names and
// order) read from `roots`. FailedPrecondition when the choice is cyclic,
// incomplete, or does not rebuild into a valid graph with the outputs' dims.
absl::StatusOr<Graph> BuildGraph(const EGraph& egraph, const Extraction& extraction, const Graph& original,
                                 const std::vector<EClassId>& roots);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EXTRACT_H_
