// Axiom validation: checking each axiom on every small instance by symbolic
// execution (axiom_redundancy.h finds axioms the others entail).
//
// Validation instantiates an axiom's quantified variables with every small
// shape (ranks 0, 2 and 4, dimensions up to --max-dim, kernels of 3) and
// every small parameter value, keeps the instances where both sides are
// well-typed IR (shape inference accepts them and the operators' signatures
// match the shapes, e.g. a convolution's group count), fills each tensor
// with fresh Z3 reals, evaluates both sides with the reference interpreter
// over those reals, and asks Z3 whether the two can differ. relu is an
// uninterpreted function with relu(0) = 0 only, so a law that holds needs no
// property of relu beyond that. A counterexample names the instance.
#ifndef TASO_VERIFIER_AXIOM_VALIDATION_H_
#define TASO_VERIFIER_AXIOM_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::verifier {

struct ValidationOptions {
  int max_dim = 2;                  // tensor dimensions range over 1..max_dim (kernel dims also 3)
  int threads = 2;
  uint64_t rlimit = 5'000'000;      // per instance
  int64_t max_instances = 5'000;    // per axiom; the rest are counted as not checked
  std::set<std::string> only;       // axiom names; empty: all
  // Extra axioms in SMT-LIB2 (as ProverOptions::extra_axioms_smt2), named
  // "extra<k>": how a candidate axiom is tried before it is added.
  std::vector<std::string> extra_axioms_smt2;
  std::function<void(const std::string&)> progress;  // one line per finished axiom
};

struct AxiomValidation {
  std::string name;
  int64_t instances = 0;  // well-typed instances checked
  int64_t held = 0;
  int64_t failed = 0;     // Z3 found values where the sides differ, or their types differ
  int64_t unknown = 0;    // solver gave up (resource limit)
  int64_t not_checked = 0;  // beyond max_instances
  std::string counterexample;  // the first failure
  double seconds = 0;
};

absl::StatusOr<std::vector<AxiomValidation>> ValidateAxioms(const ValidationOptions& options);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_AXIOM_VALIDATION_H_
