// Fuzzing proved rules: each rule is instantiated at random variable shapes
// under which its proof still holds (every operator keeps the proof signature
// recorded with the rule, core/side_conditions.h), and both sides are run on
// random inputs. A proved rule that differs on such an instance names a wrong
// axiom, or a side condition that does not capture what an axiom needs.
//
// Shapes: each distinct dimension value of the rule's variables is mapped to
// a fresh value in [1, max_dim] (or kept, which constants and reshapes with
// fixed shape parameters need), consistently, so the equalities typing needs
// survive; half the samples also move single dimensions independently, so
// equalities the generator's shapes had only by coincidence (square weights)
// are broken too. A sample is kept only if shape inference accepts both sides,
// every tensor has at most max_elements elements, and the recorded conditions
// admit both sides' (fact variables, which let a fact take other values,
// taking one value across the instance).
//
// Checks, per instance:
//  - float32 on inputs in [-1, 1], the semantics models run in. Elements agree
//    when |a-b| <= tolerance*max(1,|a|,|b|), as the store's re-check asks. An
//    element that fails only that is compared again at the scale of its
//    terms (each side evaluated on |inputs| bounds every partial sum it
//    rounds): cancellation in a sum of many terms leaves rounding error at the
//    terms' scale, not the result's. Such elements are counted, not hidden.
//  - int32 with wrap-around, exactly. Every axiom holds there: the ring laws
//    hold mod 2^32; relu and max pooling only select values, and the axioms
//    only move them through operators that copy values; average pooling is a
//    window sum and C_pool is all ones on both sides of the laws that relate
//    them. So a proved rule must agree bit for bit, with no tolerance for an
//    indexing error to hide in. Skipped for operators without integer
//    semantics (tanh, sigmoid, those activations, batch norm).
//
// Deterministic given the options (the thread count changes nothing but time).
#ifndef TASO_VERIFIER_RULE_FUZZ_H_
#define TASO_VERIFIER_RULE_FUZZ_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/rules.pb.h"

namespace taso::verifier {

struct FuzzOptions {
  int instances = 20;            // instances per rule
  uint64_t seed = 1;
  int64_t max_dim = 6;           // a sampled dimension lies in [1, max_dim]
  int64_t max_elements = 4096;   // bound on every tensor of an instance (variables and intermediates)
  int attempts = 64;             // shape samples per instance before it counts as not found
  int threads = 0;               // 0: one per core
  double tolerance = 1e-5;
  int max_examples = 3;          // mismatches kept in full per rule (all are counted)
};

enum class FuzzDomain { kFloat32, kInt32 };
const char* FuzzDomainName(FuzzDomain domain);

struct VariableShape {
  std::string name;
  std::vector<int64_t> dims;
};

// One instance where the sides differ: enough to rerun it by hand. Inputs are
// DeterministicFloatTensor / DeterministicIntTensor(type, name, input_seed).
struct FuzzMismatch {
  int instance = 0;
  uint64_t input_seed = 0;
  std::vector<VariableShape> shapes;
  FuzzDomain domain = FuzzDomain::kFloat32;
  int source_output = 0;
  int target_output = 0;
  std::vector<int64_t> output_dims;  // the source output's
  int64_t element = -1;              // row-major index; -1 when shapes differ or a side does not evaluate
  double source_value = 0;
  double target_value = 0;
  std::string detail;                // one line for people
};

enum class FuzzOutcome {
  kFuzzed,
  kNoConditions,        // proved before conditions were recorded
  kOtherVocabulary,     // recorded under another proof-signature version
  kConditionsDisagree,  // the rule's own shapes do not give its recorded conditions
  kMalformed,           // a side does not parse, or an operator has no signature
};
const char* FuzzOutcomeName(FuzzOutcome outcome);

struct RuleFuzzResult {
  std::string rule_id;
  FuzzOutcome outcome = FuzzOutcome::kFuzzed;
  std::string reason;                  // why not fuzzed
  int instances_run = 0;
  int instances_not_found = 0;         // no acceptable shapes within `attempts`
  int instances_at_other_shapes = 0;   // shapes other than the rule's own
  int instances_int32 = 0;             // also checked exactly in int32
  int64_t elements_loosened = 0;       // float elements that agree only at their terms' scale
  int mismatches = 0;                  // instances where the sides differ
  std::vector<FuzzMismatch> examples;  // the first max_examples of them
};

struct FuzzTotals {
  int rules = 0;
  int rules_fuzzed = 0;
  int rules_not_fuzzed = 0;              // outcome other than kFuzzed
  int rules_without_instances = 0;       // fuzzed, but no instance found at all
  int rules_only_own_shapes = 0;         // instances found, none at other shapes
  int rules_with_mismatches = 0;
  int64_t instances_run = 0;
  int64_t instances_not_found = 0;
  int64_t instances_at_other_shapes = 0;
  int64_t instances_int32 = 0;
  int64_t elements_loosened = 0;
  int64_t mismatches = 0;
};

struct FuzzReport {
  std::vector<RuleFuzzResult> rules;  // in the order given
  FuzzTotals totals;
};

RuleFuzzResult FuzzRule(const rules::Rule& rule, const FuzzOptions& options);
FuzzReport FuzzRules(const std::vector<rules::Rule>& rules, const FuzzOptions& options);

// "x=[3,5] w=[5,2]": an instance's shapes for people.
std::string DescribeShapes(const std::vector<VariableShape>& shapes);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_RULE_FUZZ_H_
