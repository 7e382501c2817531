// What a search reports, whichever search ran.
#ifndef TASO_OPTIMIZER_SEARCH_SEARCH_REPORT_H_
#define TASO_OPTIMIZER_SEARCH_SEARCH_REPORT_H_

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
  kGoalReached,     // eqsat: the caller's goal held (EqsatOptions::goal)
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

// What the ILP of eqsat's extraction proved; kNotApplicable for the
// backtracking search and when the ILP was not asked for.
enum class IlpVerdict {
  kNotApplicable,
  kOptimal,         // nothing cheaper exists: bound = incumbent
  kStoppedWithGap,  // stopped (time limit) with an incumbent and a bound
  kNoResult,        // not run (no time left, too large) or failed: greedy's program used
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
  // eqsat: the ILP's outcome; its incumbent's cost and its best bound (the
  // extraction's costs, which charge folded weights: kFoldedElementCostMs),
  // their relative gap ((incumbent - bound) / incumbent; 0 when optimal),
  // and the time it was given.
  IlpVerdict ilp = IlpVerdict::kNotApplicable;
  double ilp_incumbent_ms = 0;
  double ilp_bound_ms = 0;
  double ilp_gap = 0;
  absl::Duration ilp_time_limit;
  // eqsat: what the extraction chose costs in its own terms (the chosen
  // e-nodes' costs, each once): what extractors of a --dump-egraph file
  // are compared with.
  double extraction_cost_ms = 0;
  // eqsat: how `elapsed` was spent: growing the e-graph, costing its
  // e-nodes (profiling new operators), and extraction (greedy and the ILP).
  absl::Duration exploration_time, costing_time, extraction_time;
  // Rewrites on the path from the input to the best graph, by rule name.
  std::map<std::string, int> rules_applied;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SEARCH_SEARCH_REPORT_H_
