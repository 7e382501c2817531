// Internal to axiom validation: checks one axiom on the instances of one
// stratum (axiom_validation.h), in a Z3 context of its own. A checker is used
// by one thread at a time and may run many strata of its axiom in turn.
#ifndef TASO_VERIFIER_AXIOM_INSTANCES_H_
#define TASO_VERIFIER_AXIOM_INSTANCES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "verifier/axiom_validation.h"

namespace taso::verifier::internal {

// An axiom to check: a built-in one by name, or an extra one in SMT-LIB2.
struct AxiomSource {
  std::string name;
  std::string smt2;  // empty: the built-in axiom `name`
};

struct StratumOutcome {
  int64_t instances = 0;
  int64_t held = 0;
  int64_t failed = 0;
  int64_t unknown = 0;
  int64_t ill_typed = 0;
  // Shape assignments under which an E-matching trigger of the axiom (a
  // subterm binding all its variables) is well-typed, and among them those
  // where one side is well-typed and the other is not (each also a failure).
  int64_t triggered = 0;
  int64_t one_sided = 0;
  bool capped = false;  // the budget ran out before the last shape assignment
  std::string counterexample;  // the first failure
  double seconds = 0;
};

// Every shape a tensor variable takes: rank 0, 2-D with dimensions
// 1..max_dim, 4-D whose last two (kernel) dimensions also take 3.
std::vector<std::vector<int64_t>> CandidateShapes(int max_dim);

class AxiomInstanceChecker {
 public:
  // Builds the axiom; an error (unknown name, bad SMT-LIB2, not an equation)
  // is the axiom's failure. `shapes` must outlive the checker.
  static absl::StatusOr<std::unique_ptr<AxiomInstanceChecker>> Create(
      const AxiomSource& source, const std::vector<std::vector<int64_t>>& shapes, uint64_t rlimit);
  virtual ~AxiomInstanceChecker() = default;

  // The axiom's integer parameters, in the order it binds them.
  virtual const std::vector<std::string>& IntParams() const = 0;

  // Checks the instances of one stratum (values for IntParams(), in order),
  // at most `budget` well-typed ones (0: all).
  virtual StratumOutcome Run(const std::vector<int64_t>& values, int64_t budget) = 0;
};

}  // namespace taso::verifier::internal

#endif  // TASO_VERIFIER_AXIOM_INSTANCES_H_
