// Rule-set quality as Ruler and Enumo measure it: does a set of rewrites
// derive a rule? The rule's source side (mode lhs), or both sides (mode
// lhs-and-rhs), becomes an e-graph over the rule's own variables (their
// types as the rule declares them), our equality saturation (eqsat.h) runs
// the rewrites until saturated or a limit, and the rule is derived when its
// source and target outputs end in the same e-classes. Saturation stops as
// soon as they do.
#ifndef TASO_OPTIMIZER_EQSAT_DERIVE_H_
#define TASO_OPTIMIZER_EQSAT_DERIVE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/search/search_report.h"
#include "proto/rules.pb.h"

namespace taso::optimizer {

enum class DeriveMode {
  kLhs,        // the e-graph starts from the source side; the target must appear in it
  kLhsAndRhs,  // the e-graph starts from both sides; they must merge
};

// Per rule derived.
struct DeriveOptions {
  DeriveMode mode = DeriveMode::kLhs;
  int iteration_limit = 30;
  int node_limit = 10000;
  absl::Duration time_limit = absl::Seconds(10);
  // false: the rule's variables are all taken as weights (constants), so
  // every variable of our rules may bind them: derivation by the equations
  // alone, as the prover sees them. true: as declared, so a weight variable
  // of ours binds only what the optimizer would let it (weights and what is
  // computed from them).
  bool kinds_as_declared = false;
};

enum class DeriveOutcome {
  kDerived,
  kSaturated,  // saturated without the sides meeting: these rewrites cannot derive it
  kLimit,      // a limit ended saturation first: undecided
};

struct Derivation {
  DeriveOutcome outcome = DeriveOutcome::kLimit;
  SearchStop stop = SearchStop::kUnspecified;
  std::string stop_detail;  // eqsat's: "saturated", "node limit N", ...
  int iterations = 0;
  int enodes = 0;
  absl::Duration time;
};

// Whether `rewrites` derive `rule`. In mode lhs a rule whose source is a bare
// variable starts from its target instead (a variable has nothing to rewrite).
// InvalidArgument when the rule's sides do not decode.
absl::StatusOr<Derivation> DeriveRule(const rules::Rule& rule, const std::vector<RewriteRule>& rewrites,
                                      const DeriveOptions& options = {});

// "derived", "saturated" or "limit": the outcome as reports name it.
std::string DeriveOutcomeName(DeriveOutcome outcome);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_DERIVE_H_
