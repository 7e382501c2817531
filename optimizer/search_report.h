// What a search reports, whichever search ran.
#ifndef TASO_OPTIMIZER_SEARCH_REPORT_H_
#define TASO_OPTIMIZER_SEARCH_REPORT_H_

#include <map>
#include <string>

#include "absl/time/time.h"

namespace taso::optimizer {

// Why the search itself stopped. Typed, so a report's reason never depends
// on the wording of its detail text (or on what extraction said afterwards).
enum class SearchStop {
  kUnspecified,
  kQueueExhausted,  // backtrack: no rewrite gives a graph within alpha of the best
  kSaturated,       // eqsat: a round changed nothing
  kBudget,          // backtrack: its budget of expanded graphs
  kIterationLimit,  // eqsat: its limit of rounds
  kNodeLimit,       // eqsat: its limit of e-nodes
  kTimeLimit,
};

// How equality saturation chose its program from the e-graph; kNotRun for
// the backtracking search, which has nothing to extract.
enum class ExtractionOutcome {
  kNotRun,
  kIlpOptimal,
  kIlpTimeLimit,     // CBC ran out of time: the best program it had
  kIlpStopped,       // CBC stopped otherwise: the best program it had
  kGreedy,           // the ILP was not asked for
  kGreedyIlpFailed,  // the ILP failed (or the e-graph was too large): greedy's
  kFailed,           // no program could be built: the input graph kept
};

struct SearchReport {
  double initial_cost_ms = 0;
  double best_cost_ms = 0;
  int expanded = 0;        // graphs popped and expanded
  int generated = 0;       // distinct graphs produced by rewrites
  int rejected = 0;        // rewrites that did not fit (shapes, cycles)
  int rule_bans = 0;       // eqsat: rules the backoff scheduler banned for matching too much
  absl::Duration elapsed;
  SearchStop stop_reason = SearchStop::kUnspecified;
  // In words: "queue exhausted: ...", "budget of N expanded graphs", "time
  // limit of S", "saturated", "node limit N", ...
  std::string stop_detail;
  ExtractionOutcome extraction = ExtractionOutcome::kNotRun;
  // In words: "ilp optimal", "ilp (time limit, best found)", "greedy (ilp
  // failed: ...)", ...; empty when no extraction ran.
  std::string extraction_detail;
  // Rewrites on the path from the input to the best graph, by rule name.
  std::map<std::string, int> rules_applied;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SEARCH_REPORT_H_
