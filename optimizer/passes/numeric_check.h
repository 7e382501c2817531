// The last line of defence: before an optimized model is returned, it is run
// against the original in the float interpreter on random inputs. Opaque
// operators (kept verbatim by every rewrite) are stood in for by a smooth
// pseudo-random function of their inputs, the same in both graphs, that is
// sensitive to every input element and to where it sits, so a difference
// upstream of one (even a permutation) still shows downstream.
#ifndef TASO_OPTIMIZER_PASSES_NUMERIC_CHECK_H_
#define TASO_OPTIMIZER_PASSES_NUMERIC_CHECK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/interpreter.h"

namespace taso::optimizer {

// The seed a zero seed stands for, as a zero OptimizeOptions.seed means the
// default; `taso optimize --seed` defaults to it too.
inline constexpr uint64_t kDefaultCheckSeed = 1;

struct NumericCheckOptions {
  int seeds = 2;                 // independent random input sets
  uint64_t seed = 0;             // the input sets derive from it alone; 0: kDefaultCheckSeed
  double tolerance = 1e-3;       // |a - b| <= tolerance * (1 + |a|)
  int64_t max_flops = 50e9;      // larger graphs are not run (the check would take minutes)
  // Nor graphs whose tensors, all held at once as the check holds them,
  // take more than this (CheckBytes): a small file may declare huge inputs.
  int64_t max_bytes = int64_t{4} << 30;
};

// The bytes the check holds to run `g` once: every node's float outputs.
// Unknown dimensions count as 1.
int64_t CheckBytes(const Graph& g);
// About how many floating-point operations one run of `g` in the check's
// interpreter takes (convolutions and matmuls counted, others one per output
// element), for max_flops.
int64_t CheckFlops(const Graph& g);

struct NumericCheck {
  bool ran = false;       // false: could not run (reason says why); no verdict
  bool equal = false;     // ran and every output matched within tolerance
  double max_abs_diff = 0;
  uint64_t seed = 0;      // the seed the inputs came from (never 0: a zero option is resolved)
  std::string reason;     // e.g. "output logits element 12: 0.5 vs 0.7", or why it did not run
};

NumericCheck CompareGraphs(const Graph& original, const Graph& optimized, const NumericCheckOptions& options = {});

// What the check feeds an input or weight node in input set `set` (0-based)
// of a check with `seed` (0: kDefaultCheckSeed): a weight's own float32 data,
// else values in [-1, 1] from (seed, set, the node's name) only, so both
// graphs get the same values and one seed reproduces a check.
absl::StatusOr<FloatTensor> CheckInputValue(const Node& node, uint64_t seed, int set);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_PASSES_NUMERIC_CHECK_H_
