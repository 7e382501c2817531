// What a long optimization is doing, for a caller that shows it (`taso
// optimize` prints a line at least every few seconds): the optimizer names
// each phase as it enters it, and the searches report their state as it
// changes. An observer is called on the optimizing thread and must be quick
// and thread-safe; it decides itself how often to print.
#ifndef TASO_OPTIMIZER_SEARCH_PROGRESS_H_
#define TASO_OPTIMIZER_SEARCH_PROGRESS_H_

#include <cstdint>

namespace taso::optimizer {

enum class OptimizePhase {
  kLoadingRules,
  kImport,
  kBaseline,    // the input as a runtime runs it, costed
  kSearch,
  kExtraction,  // eqsat: choosing the program out of the e-graph (greedy, sharing moves, the ILP)
  kCheck,       // the exported model against the input on random inputs
  kMeasure,     // never slower: both timed end to end
  kDone,
};

const char* PhaseName(OptimizePhase phase);

struct SearchProgress {
  double initial_cost_ms = 0;
  double best_cost_ms = 0;  // backtracking: the best graph so far; 0 where not known yet (eqsat explores first)
  int64_t graphs_expanded = 0;   // backtracking
  int64_t graphs_generated = 0;  // backtracking: rewritten graphs costed
  int iterations = 0;           // eqsat rounds
  int64_t enodes = 0;           // eqsat
};

class ProgressObserver {
 public:
  virtual ~ProgressObserver() = default;
  virtual void EnterPhase(OptimizePhase phase) = 0;
  virtual void SearchUpdate(const SearchProgress& now) = 0;
};

// Calls that do nothing when no observer is given.
inline void EnterPhase(ProgressObserver* observer, OptimizePhase phase) {
  if (observer != nullptr) observer->EnterPhase(phase);
}

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SEARCH_PROGRESS_H_
