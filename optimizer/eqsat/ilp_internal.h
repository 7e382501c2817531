// The ILP extraction's phases, shared by extract_ilp.cc (starting point, the
// solve loop, reading CBC's solutions), ilp_prune.cc (which e-nodes CBC sees)
// and ilp_model.cc (the linear program); not part of the optimizer's
// interface. extract.h explains the formulation.
#ifndef TASO_OPTIMIZER_EQSAT_ILP_INTERNAL_H_
#define TASO_OPTIMIZER_EQSAT_ILP_INTERNAL_H_

#include <coin/Cbc_C_Interface.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "optimizer/eqsat/extract.h"

namespace taso::optimizer::ilp_internal {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Strongly connected components of the class graph through the given e-nodes.
std::vector<int> ClassComponents(const ExtractionProblem& p, const std::vector<bool>& usable);

// needed(c): the classes every acyclic choice for c has: c, and per e-node
// the union of its children's, intersected over c's e-nodes (the greatest
// fixpoint, so cycles add nothing: by induction on a choice's depth, it has
// them all). Computed children first (components in Tarjan's order),
// iterating down from "every class" inside a component. must: the roots'
// (every choice has them).
class NeededSets {
 public:
  NeededSets(const ExtractionProblem& p, const std::vector<bool>& usable);
  size_t words() const { return words_; }
  const uint64_t* of(int c) const { return bits_.get() + c * words_; }
  const uint64_t* must() const { return must_.data(); }
  static bool Has(const uint64_t* set, int c) { return (set[c / 64] >> (c % 64)) & 1; }
  void Or(uint64_t* into, const uint64_t* from) const {
    for (size_t w = 0; w < words_; ++w) into[w] |= from[w];
  }
  // Calls f(c) for each class of the set.
  template <typename F>
  void ForEach(const uint64_t* set, F f) const {
    for (size_t w = 0; w < words_; ++w) {
      for (uint64_t bits = set[w]; bits != 0; bits &= bits - 1) f(static_cast<int>(w * 64 + __builtin_ctzll(bits)));
    }
  }

 private:
  size_t classes_, words_;
  std::unique_ptr<uint64_t[]> bits_;  // per class, words_ words
  std::vector<uint64_t> must_;
};

// Per class, a lower bound of the cost of an acyclic choice for it through
// usable e-nodes: the least over its e-nodes of their cost plus their
// dearest child's bound (children may share); +infinity where there is none.
std::vector<double> AcyclicBounds(const ExtractionProblem& p, const std::vector<bool>& usable);

// The e-nodes and classes CBC sees.
struct IlpDomain {
  std::vector<bool> alive;                   // per e-node
  std::vector<bool> in_model;                // per class: reached from the roots through alive e-nodes
  std::vector<std::vector<int>> class_alive;  // per class: its alive e-nodes
};

// Pruning (when the settings ask for it; `best`, the best acyclic choice
// known, bounds it and stays in), then only e-nodes with an acyclic choice
// that the roots reach. NotFound when a root is left without an e-node.
absl::StatusOr<IlpDomain> ChooseDomain(const ExtractionProblem& p, const ProblemChoice* best,
                                       const IlpSettings& settings, IlpStats& stats);

// A linear program gathered first and handed to CBC in one call: adding rows
// one at a time copies the matrix each time, which is quadratic.
class LinearProgram {
 public:
  int AddColumn(double lower, double upper, double objective, bool integer);
  void AddRow(const std::vector<int>& cols, const std::vector<double>& coefs, double lower, double upper);
  void SetLower(int col, double lower) { col_lower_[col] = lower; }
  // `relaxed`: every column continuous (the LP relaxation).
  void LoadInto(Cbc_Model* model, bool relaxed = false) const;
  int columns() const { return static_cast<int>(entries_.size()); }
  int rows() const { return static_cast<int>(row_lower_.size()); }
  int nonzeros() const { return nonzeros_; }

 private:
  std::vector<double> col_lower_, col_upper_, objective_, row_lower_, row_upper_;
  std::vector<bool> integer_;
  std::vector<std::vector<std::pair<int, double>>> entries_;  // per column: (row, coefficient)
  int nonzeros_ = 0;
};

// The model over a domain: a binary column per alive e-node, the rows that
// make a choice, and the acyclicity constraints; more cycle cuts may be
// added between solves.
struct IlpModel {
  LinearProgram base;
  // Per e-node: its column, -1 outside the model; a collapsed class's e-node
  // shares its reader's.
  std::vector<int> column;
  std::vector<int> columns_node;  // per e-node column (the first ones): its e-node
  std::vector<std::vector<int>> cuts;  // cycles to forbid, as classes
  std::set<std::vector<int>> cut_set;
  size_t base_cuts = 0;  // the first cuts, already in `base`

  // Forbids a cycle (its classes in order, each reading the next) in `lp`.
  void AddCut(const ExtractionProblem& p, const IlpDomain& domain, LinearProgram& lp,
              const std::vector<int>& cycle) const;
};

IlpModel BuildIlpModel(const ExtractionProblem& p, const IlpDomain& domain, const IlpSettings& settings,
                       IlpStats& stats);

// SolveIlp in a forked child with settings.child_memory_mb as its memory cap
// (ilp_isolated.cc); the child's result and stats come back through a pipe.
absl::StatusOr<ProblemChoice> SolveIlpIsolated(const ExtractionProblem& p, absl::Duration time_limit,
                                               const ProblemChoice* warm_start, const IlpSettings& settings,
                                               IlpStats& stats);

}  // namespace taso::optimizer::ilp_internal

#endif  // TASO_OPTIMIZER_EQSAT_ILP_INTERNAL_H_
