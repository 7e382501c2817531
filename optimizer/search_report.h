// What a search reports, whichever search ran.
#ifndef TASO_OPTIMIZER_SEARCH_REPORT_H_
#define TASO_OPTIMIZER_SEARCH_REPORT_H_

#include <map>
#include <string>

#include "absl/time/time.h"

namespace taso::optimizer {

struct SearchReport {
  double initial_cost_ms = 0;
  double best_cost_ms = 0;
  int expanded = 0;        // graphs popped and expanded
  int generated = 0;       // distinct graphs produced by rewrites
  int rejected = 0;        // rewrites that did not fit (shapes, cycles)
  absl::Duration elapsed;
  // "queue exhausted", "budget of N graphs", "time limit of S", ...
  std::string stop_reason;
  // Rewrites on the path from the input to the best graph, by rule name.
  std::map<std::string, int> rules_applied;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SEARCH_REPORT_H_
