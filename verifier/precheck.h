// Verifying a rule that did not come through the generator's re-check (one
// written by hand and imported): first a numeric pre-check, then the proof.
// The pre-check evaluates both sides exactly in int32 (wrap-around, two
// input seeds; skipped for operators without integer semantics) and in float
// on inputs in [-1, 1] (two seeds, relative tolerance), so a wrong rule is
// refuted with a concrete counterexample before Z3 spends time on it.
#ifndef TASO_VERIFIER_PRECHECK_H_
#define TASO_VERIFIER_PRECHECK_H_

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/graph.h"
#include "proto/rules.pb.h"
#include "verifier/prover.h"

namespace taso::verifier {

// OK when every mapped output pair agrees; FailedPrecondition naming the
// output, element and values when one does not; InvalidArgument when a side
// does not evaluate.
absl::Status NumericPrecheck(const Graph& source, const Graph& target, const std::vector<std::pair<int, int>>& outputs,
                             double tolerance = 1e-4);

// Sets `rule`'s status and proof: REJECTED_PRECHECK with the counterexample,
// or the prover's verdict. Errors only for a rule whose graphs are malformed.
absl::Status VerifyStandalone(Prover& prover, const std::string& solver, rules::Rule& rule);

// VerifyStandalone for a rule someone claims PROVED (a store checking a
// verifier's verdict): first the claimed proof alone (Prover::CheckClaim with
// its axioms and the facts its conditions leave open), then, if that does not
// prove it, the full proof. Either way the status, proof and conditions set
// are this prover's own; the caller compares the conditions with the claim.
absl::Status VerifyClaim(Prover& prover, const std::string& solver, rules::Rule& rule);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_PRECHECK_H_
