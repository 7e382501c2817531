// The last line of defence: before an optimized graph is returned, it is run
// against the original in the float interpreter on random inputs. Opaque
// operators (kept verbatim by every rewrite) are stood in for by a smooth
// pseudo-random function of their inputs, the same in both graphs, that is
// sensitive to every input element and to where it sits, so a difference
// upstream of one (even a permutation) still shows downstream.
#ifndef TASO_OPTIMIZER_NUMERIC_CHECK_H_
#define TASO_OPTIMIZER_NUMERIC_CHECK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/graph.h"

namespace taso::optimizer {

struct NumericCheckOptions {
  int seeds = 2;                 // independent random input sets
  double tolerance = 1e-3;       // |a - b| <= tolerance * (1 + |a|)
  int64_t max_flops = 50e9;      // larger graphs are not run (the check would take minutes)
};

struct NumericCheck {
  bool ran = false;       // false: could not run (reason says why); no verdict
  bool equal = false;     // ran and every output matched within tolerance
  double max_abs_diff = 0;
  std::string reason;     // e.g. "output logits element 12: 0.5 vs 0.7", or why it did not run
};

NumericCheck CompareGraphs(const Graph& original, const Graph& optimized, const NumericCheckOptions& options = {});

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_NUMERIC_CHECK_H_
