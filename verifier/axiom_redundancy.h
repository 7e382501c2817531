// Finding axioms the others entail: each axiom is negated and asserted with
// all the others, E-matching only; unsat means the others prove it.
#ifndef TASO_VERIFIER_AXIOM_REDUNDANCY_H_
#define TASO_VERIFIER_AXIOM_REDUNDANCY_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::verifier {

struct RedundancyOptions {
  uint64_t rlimit = 20'000'000;  // per axiom
  std::set<std::string> only;
};

struct AxiomRedundancy {
  std::string name;
  bool entailed = false;           // the other axioms prove it
  std::vector<std::string> by;     // an unsat core of the others
  std::string detail;              // Z3's answer when not entailed
};

absl::StatusOr<std::vector<AxiomRedundancy>> FindRedundantAxioms(const RedundancyOptions& options);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_AXIOM_REDUNDANCY_H_
