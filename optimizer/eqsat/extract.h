// Choosing one e-node per needed e-class so that the chosen e-nodes form an
// acyclic program of least cost, and turning that choice into a Graph.
//
// Greedy: each class takes the e-node of least tree cost (its own cost plus
// its children's), fast but blind to sharing: a subexpression used twice is
// counted twice, so it can miss a cheaper program that shares more.
//
// DAG greedy (extract_dag.cc): each class takes the e-node whose program
// (the e-node and everything below it, each e-node once) costs least, so a
// subexpression two operands share is counted once. It sees sharing inside
// one e-node's operands, not across the choices of unrelated classes.
//
// ILP (CBC): a binary x per e-node; each needed class chooses one e-node
// (the outputs' classes are needed; a chosen e-node needs its children's
// classes); the objective is the sum of the chosen e-nodes' costs, so shared
// subexpressions count once. What keeps it small and its relaxation tight
// enough for CBC on 20,000-50,000-e-node e-graphs (bench/extract_bench):
//  - pruning (Prune in extract.cc): e-nodes with no acyclic choice, e-nodes
//    in no choice as cheap as the starting one, e-nodes a sibling dominates,
//    classes the outputs no longer reach. On ResNet-50 and Inception-v3 this
//    leaves ~40% of the e-nodes: their e-graphs hold thousands of equivalent
//    matmuls for the classifier alone.
//  - a class variable y (the sum of its e-nodes' x) that children rows read.
//  - "needed" rows: the classes every acyclic choice has are fixed to 1, and
//    a class implies the classes every choice for it needs. Without them the
//    relaxation computes the output from a cycle of nearly free e-nodes
//    (transpose(transpose(x)), get-items of a split of a concat) instead of
//    the network: its bound is under 0.5% of the optimum whatever the
//    acyclicity rows, and branch-and-bound gets nowhere. With them it is at
//    77% (ResNet-50) and 98% (Inception-v3), CBC's root cuts close the rest
//    and both solve to optimality in 1-3 s.
//  - acyclicity only where cycles can be, in the strongly connected
//    components of the class graph: a linear order of the component's
//    classes (u_ij, transitive), which a chosen e-node must respect; larger
//    components get cycle cuts (the classes of a cycle may not all choose an
//    e-node reading the next), their elementary cycles up front and further
//    ones lazily (solve, forbid the cycles of the solution, solve again).
//    Tensat's order variables (big-M rows) remain as an option.
//  - CBC knows the greedy cost as its cutoff (a MIP start plus preprocessing
//    makes CBC 2.10 crash when its time limit falls early), runs without
//    zero-half cuts (their separator took 7-15 GB on these e-graphs with
//    the old model, and exits the process when an allocation fails), and
//    its claims are only believed when it stopped before the time limit.
// Whatever the ILP returns is checked acyclic and never dearer than the
// greedy choice, which is returned when CBC finds nothing better in time.
//
// Setting TASO_ILP_DUMP=FILE makes ExtractIlp write its problem to FILE
// (WriteExtractionProblem) first, for bench/extract_bench.
#ifndef TASO_OPTIMIZER_EQSAT_EXTRACT_H_
#define TASO_OPTIMIZER_EQSAT_EXTRACT_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/graph.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/eqsat/egraph.h"

namespace taso::optimizer {

// What extraction charges per element of a value computed from weights only
// (folded into a new weight after the search): about the time to stream it
// from memory once (~100 GB/s). Without it such values are free, so the
// extraction is indifferent between one merged weight every step of an
// unrolled RNN shares and a different concatenation per step; at batch 1 the
// matmuls are bound by streaming their weights, so a model carrying 8 copies
// ran 3x slower. The ILP counts a shared class once, so sharing wins.
inline constexpr double kFoldedElementCostMs = 4e-9;

// Milliseconds per e-node id, asked of the cost model in one batch: 0 for
// variables and get-items, kFoldedElementCostMs per element for foldable
// operators; +infinity for e-nodes that
// extraction must not choose: dead duplicates, e-nodes that are their own
// child (a self-loop), and e-nodes whose types inferred from their children's
// classes differ from their class's types (another layout or split record),
// so that a graph built from chosen e-nodes has exactly the types it was
// costed with. Operators are asked in chunks, in e-node order (the input's
// first: e-nodes below `always_below`, whatever the time), until `deadline`;
// those not asked by then cost +infinity too (never chosen), and `unpriced`
// (when given) counts them.
absl::StatusOr<std::vector<double>> ENodeCosts(const EGraph& egraph, CostModel& cost,
                                               absl::Time deadline = absl::InfiniteFuture(),
                                               int* unpriced = nullptr, ENodeId always_below = 0);

struct Extraction {
  std::map<EClassId, ENodeId> choice;  // every class the outputs need, and only those
  double cost_ms = 0;                  // the chosen e-nodes' costs, each counted once
  bool optimal = false;                // the ILP proved nothing cheaper exists
  bool time_limited = false;           // the ILP stopped at its time limit
  // The ILP's best bound on the least cost (= cost_ms when optimal; 0 when
  // CBC had none, e.g. stopped before its root relaxation).
  double lower_bound_ms = 0;
};

// The chosen e-nodes' costs, each counted once (what the program costs).
double ExtractionCost(const Extraction& extraction, const std::vector<double>& costs);

// NotFound when some output class has no acyclic choice of finite cost.
absl::StatusOr<Extraction> ExtractGreedy(const EGraph& egraph, const std::vector<EClassId>& roots,
                                         const std::vector<double>& costs);

// SolveGreedyDag on the e-graph's problem (never dearer than ExtractGreedy).
// With a `sharing_deadline`, ImproveBySharing follows until then (capped by
// `deadline`); `moves` counts the moves it kept.
absl::StatusOr<Extraction> ExtractGreedyDag(const EGraph& egraph, const std::vector<EClassId>& roots,
                                            const std::vector<double>& costs,
                                            absl::Time deadline = absl::InfiniteFuture(),
                                            std::optional<absl::Time> sharing_deadline = std::nullopt,
                                            int* moves = nullptr);

// The extraction problem apart from the e-graph: the classes the outputs
// reach through e-nodes of finite cost (numbered from 0), their e-nodes of
// finite cost (numbered from 0, in e-node id order) and the outputs' classes.
struct ExtractionProblem {
  std::vector<EClassId> class_id;               // per class: its e-graph class
  std::vector<std::vector<int>> class_nodes;    // per class: its e-nodes (may be none)
  std::vector<ENodeId> node_id;                 // per e-node: its e-graph e-node
  std::vector<int> node_class;                  // per e-node: its class
  std::vector<double> node_cost;                // per e-node: milliseconds, finite, >= 0
  std::vector<std::vector<int>> node_children;  // per e-node: the classes it reads, sorted, distinct
  std::vector<int> roots;                       // the outputs' classes, in output order
  std::vector<std::string> node_label;          // per e-node: what it computes, or empty
  std::vector<std::string> class_label;         // per class: its type(s), or empty
};

// With `labels`, node_label too (else it stays empty).
ExtractionProblem MakeExtractionProblem(const EGraph& egraph, const std::vector<EClassId>& roots,
                                        const std::vector<double>& costs, bool labels = false);

// A text format for problems (bench/extract_bench reads what TASO_ILP_DUMP wrote).
absl::Status WriteExtractionProblem(const ExtractionProblem& problem, const std::string& path);
absl::StatusOr<ExtractionProblem> ReadExtractionProblem(const std::string& path);

// A choice for a problem: per class, one of its e-nodes or -1. Only the
// classes the roots need have one.
struct ProblemChoice {
  std::vector<int> pick;
  double cost_ms = 0;  // the chosen e-nodes' costs, each counted once
  bool optimal = false;
  bool time_limited = false;
  double lower_bound_ms = 0;  // the ILP's best bound (Extraction::lower_bound_ms)
  // A heuristic's own choice was dearer than one it started from (DAG greedy
  // keeps greedy's then), so that one is returned.
  bool kept_earlier = false;
};

// How the ILP is built and solved. The defaults are what EqsatSearch uses;
// the rest is for bench/extract_bench and tests.
struct IlpSettings {
  enum class Acyclicity {
    kLinearOrder,     // a linear order per small component, cycle cuts in larger ones
    kLazyCycleCuts,   // cycle cuts everywhere
    kOrderVariables,  // Tensat's order variables (big-M) in every component
  };
  Acyclicity acyclicity = Acyclicity::kLinearOrder;
  // Components of at most this many classes get a linear order (its rows
  // grow with the cube of the size).
  int linear_order_limit = 50;
  // Cycle cuts: at most this many elementary cycles forbidden up front.
  int cycle_limit = 1000;
  bool prune = true;
  // A variable per class (the sum of its e-nodes'), read by its parents'
  // rows; else the sum is written out in every row (the old model).
  bool class_variables = true;
  // With class variables: the needed rows.
  bool needed_rows = true;
  // With class variables: a class of one e-node that one e-node alone reads
  // (outside cycles, not an output) shares that reader's column.
  bool collapse_classes = true;
  // With class variables: inside cyclic components, a chosen e-node needs
  // the child's e-nodes that cannot close a cycle through it, not just the
  // child class (ilp_model.cc, AcyclicChildColumns). Off: valid and tighter
  // (a two-cycle's relaxation exact; the LSTM cell's 60 s bound 0.430 ->
  // 0.463 ms), but CBC then took 44 s instead of 36 s to prove the
  // transformer layer's optimum, and no gap it leaves open closes.
  bool acyclic_child_rows = false;
  // How CBC learns of the best choice known: as its cutoff (only better
  // solutions count), or as a MIP start (can crash CBC with preprocessing).
  enum class WarmStart { kCutoff, kMipStart, kNone };
  WarmStart warm_start = WarmStart::kCutoff;
  // CBC parameters (Cbc_setParameter: name, value) after ExtractIlp's own
  // (elapsed time, no zero-half cuts).
  std::vector<std::pair<std::string, std::string>> cbc_parameters;
  int log_level = 0;  // CBC's
  // Solve in a forked child (core/isolated_call.h) whose address space may
  // grow by at most `child_memory_mb` (0: no cap). CBC calls exit() when an
  // allocation fails and has crashed on some models; in a child that is an
  // error (ResourceExhausted for the cap, Aborted for a crash), after which
  // the caller keeps the greedy choice, instead of the end of a service.
  bool isolate = true;
  int64_t child_memory_mb = 4096;
};

// What the ILP did (for benchmarks and tests).
struct IlpStats {
  int classes = 0, enodes = 0;                // the problem's
  int model_classes = 0, model_enodes = 0;    // after pruning
  int pruned_by_bound = 0, pruned_by_dominance = 0;
  int must_classes = 0, needed_rows = 0;      // classes fixed to 1, implication rows
  int collapsed_classes = 0;                  // sharing their reader's column
  int acyclic_child_rows = 0;                 // child rows inside cyclic components, strengthened
  int ordered_components = 0;                 // given a linear order
  int upfront_cycles = 0;                     // cycles forbidden before the first solve
  bool all_cycles_upfront = false;            // ... and they were all there are
  int columns = 0, rows = 0, nonzeros = 0;    // of the last model CBC solved
  double prepare_seconds = 0;                 // pruning and building the model
  int solves = 0;                             // CBC runs (lazy cuts: one more per round of cuts)
  int cycle_cuts = 0;                         // cycles forbidden after a solve
  int cyclic_solutions = 0;                   // CBC solutions that had a cycle
  double lower_bound_ms = 0;                  // CBC's bound, where it has one
  std::string outcome;                        // "optimal", "time limit", or what went wrong
};

// The greedy choice of ExtractGreedy on the problem. NotFound when a root has
// no acyclic choice of finite cost.
absl::StatusOr<ProblemChoice> SolveGreedy(const ExtractionProblem& problem);

// Per class, the e-node whose program (it and every e-node below it, each
// counted once) costs least, relaxed to a fixpoint; an e-node whose operands'
// programs contain its own class is skipped (it would be a cycle). The
// result is never dearer than SolveGreedy's, which it returns (kept_earlier)
// when its own choice is dearer, incomplete or cyclic, or when `deadline`
// passes first. NotFound when neither finds an acyclic choice.
absl::StatusOr<ProblemChoice> SolveGreedyDag(const ExtractionProblem& problem,
                                             absl::Time deadline = absl::InfiniteFuture());

// Sharing moves from `start` (a complete acyclic choice): DAG greedy takes,
// per class, the e-node whose own program costs least, so it never takes a
// value several classes could read that pays only once they all do (one
// matmul of stacked inputs whose split parts replace k matrix-vector
// products). A move takes a class S and switches every needed class that has
// an e-node reading S to the cheapest such e-node, filling classes that had
// no pick with tree-cost greedy's; it is kept when the whole choice, each
// e-node counted once, is acyclic and cheaper. Sweeps over every S repeat
// until none is kept or `deadline` passes. Never dearer than `start`, which
// it returns when `start` is not complete and acyclic; `moves` (when given)
// counts the moves kept.
ProblemChoice ImproveBySharing(const ExtractionProblem& problem, const ProblemChoice& start,
                               absl::Time deadline = absl::InfiniteFuture(), int* moves = nullptr);

// What the choice costs written out as a tree: each root's e-node plus, for
// every operand read, that operand's tree cost again (a subexpression used
// twice counts twice), summed over the roots. `uses` (per e-node, parallel
// to node_children: how often it reads each class) counts repeated operands;
// without it each distinct operand counts once. +infinity when `pick` lacks
// a class the roots need or is cyclic.
double TreeCost(const ExtractionProblem& problem, const std::vector<int>& pick,
                const std::vector<std::vector<int>>* uses = nullptr);

// The ILP on the problem, from `warm_start` (an acyclic choice, e.g.
// greedy's) or the better of SolveGreedy's and SolveGreedyDag's when that is
// cheaper, null or not acyclic,
// within `time_limit` (pruning and building the model included; CBC may
// overrun it by a fraction of a second). The result is acyclic and never
// dearer than the warm start, which it is when CBC finds nothing better.
// Unavailable when there is no warm start and CBC finds no solution in time;
// Internal when CBC fails otherwise.
absl::StatusOr<ProblemChoice> SolveIlp(const ExtractionProblem& problem, absl::Duration time_limit,
                                       const ProblemChoice* warm_start, const IlpSettings& settings = {},
                                       IlpStats* stats = nullptr);

// The ILP's linear relaxation (the model SolveIlp builds, every column
// continuous, no cuts): per e-node its value (a collapsed class's e-node
// takes its reader's), and its objective in stats->lower_bound_ms. For
// studying where the relaxation is weak (bench/extract_bench --relaxation).
absl::StatusOr<std::vector<double>> SolveIlpRelaxation(const ExtractionProblem& problem,
                                                       const IlpSettings& settings = {}, IlpStats* stats = nullptr);

// SolveIlp on the e-graph's problem. `warm_start` may be null.
absl::StatusOr<Extraction> ExtractIlp(const EGraph& egraph, const std::vector<EClassId>& roots,
                                      const std::vector<double>& costs, absl::Duration time_limit,
                                      const Extraction* warm_start = nullptr, const IlpSettings& settings = {},
                                      IlpStats* stats = nullptr);

// The program of the choice: every input of `original` (same names, types
// and order), the weights it reads, and `original`'s outputs (same names and
// order) read from `roots`. FailedPrecondition when the choice is cyclic,
// incomplete, or does not rebuild into a valid graph with the outputs' dims.
absl::StatusOr<Graph> BuildGraph(const EGraph& egraph, const Extraction& extraction, const Graph& original,
                                 const std::vector<EClassId>& roots);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_EXTRACT_H_
