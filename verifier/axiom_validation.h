// Axiom validation: checking each axiom on every small instance by symbolic
// execution.
//
// An axiom's integer parameters (strides, padding, activation, groups, axes,
// kernel sizes, a concat's equal-halves flag...) range over small domains;
// each assignment of them is a stratum. Within a stratum the axiom's tensor
// variables range over every small shape (ranks 0, 2 and 4, dimensions
// 1..max_dim, kernels also 3), and an instance is kept when both sides are
// well-typed IR: shape inference accepts them and every operator's proof
// signature on those shapes is the very symbol the axiom wrote (a
// convolution's group count, a concat's equal halves). Each tensor is filled
// with fresh Z3 reals, both sides are evaluated by the reference interpreter
// over those reals, and Z3 is asked whether they can differ. Separately,
// every shape assignment that could instantiate the axiom during a proof (a
// subterm binding all its variables is well-typed) must make both sides
// well-typed or neither, with no budget: this costs no solver call. relu is an
// uninterpreted function with relu(0) = 0 only, so a law that holds needs no
// property of relu beyond that. A counterexample names the instance.
//
// Each stratum has its own instance budget, so no parameter combination is
// starved by the ones enumerated before it.
#ifndef TASO_VERIFIER_AXIOM_VALIDATION_H_
#define TASO_VERIFIER_AXIOM_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::verifier {

struct ValidationOptions {
  int max_dim = 3;                  // tensor dimensions range over 1..max_dim (kernel dims also 3)
  int threads = 2;
  uint64_t rlimit = 20'000'000;     // Z3 resource limit per instance, as the CLI's --rlimit; 0: none
  // Well-typed instances checked per stratum at most; 0: every instance.
  int64_t max_instances_per_stratum = 20;
  std::set<std::string> only;       // axiom names; empty: all
  // Extra axioms in SMT-LIB2 (as ProverOptions::extra_axioms_smt2), named
  // "extra<k>": how a candidate axiom is tried before it is added.
  std::vector<std::string> extra_axioms_smt2;
  std::function<void(const std::string&)> progress;  // one line per finished axiom
};

// One assignment of an axiom's integer parameters, in the order it binds them.
using Stratum = std::vector<std::pair<std::string, int64_t>>;
std::string StratumToString(const Stratum& s);  // "sh=1 sw=2 pad=0"

// The values an integer parameter ranges over, by its name (see the .cc).
std::vector<int64_t> IntDomain(const std::string& name, int max_dim);

struct AxiomValidation {
  std::string name;
  int64_t instances = 0;  // well-typed instances checked
  int64_t held = 0;
  int64_t failed = 0;     // Z3 found values where the sides differ, or their types differ
  int64_t unknown = 0;    // solver gave up (resource limit)
  // Assignments of shapes to the tensor variables that typing rejected; a
  // rejected prefix counts every completion it rules out, so
  // instances + ill_typed = strata x shapes^variables when no stratum is capped.
  int64_t ill_typed = 0;
  // Typing in both directions: shape assignments under which a subterm that
  // binds every variable of the axiom (what Z3's E-matching instantiates it
  // from) is well-typed, and those among them where one side of the equation
  // is well-typed IR and the other is not. Such an instance equates a real
  // tensor with an unspecified one, which other laws can then turn into a
  // false equation between real tensors (matmul_concat_sum read right to
  // left did). Every one-sided instance is also counted in `failed`.
  int64_t triggered = 0;
  int64_t one_sided = 0;
  int64_t strata = 0;
  int64_t capped_strata = 0;         // strata whose budget ran out before their last instance
  std::vector<Stratum> empty_strata;  // strata with no well-typed instance at all
  // Parameter name -> value -> instances checked with that value.
  std::map<std::string, std::map<int64_t, int64_t>> by_param;
  std::string counterexample;  // the first failure, in stratum order
  double seconds = 0;          // summed over the strata (thread time, not wall time)
};

absl::StatusOr<std::vector<AxiomValidation>> ValidateAxioms(const ValidationOptions& options);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_AXIOM_VALIDATION_H_
