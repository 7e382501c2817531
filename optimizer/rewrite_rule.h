// A rewrite: one direction of a verified rule, as the search applies it.
// The left side is a pattern (its inputs and weights are variables that bind
// to tensors of the graph being optimized); the right side is what replaces
// it. Rules are shape-polymorphic: the prover showed them for any tensors the
// operators accept, so variables match tensors of any shape and the rewrite
// is checked by shape inference when it is applied.
#ifndef TASO_OPTIMIZER_REWRITE_RULE_H_
#define TASO_OPTIMIZER_REWRITE_RULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "proto/rules.pb.h"

namespace taso::optimizer {

struct RewriteRule {
  std::string name;  // "<rule id>" or "<rule id>~" for the backward direction
  Graph lhs;         // the pattern; sources are variables, by name
  Graph rhs;         // the replacement, over the same variable names
  // lhs.outputs()[i] is replaced by rhs.outputs()[i].
  // Variables that must bind to constant tensors (weights and what is
  // computed from weights only).
  std::vector<std::string> weight_variables;
  int lhs_ops = 0;  // operator count of the pattern
  int rhs_ops = 0;
  // Variables bind only tensors with exactly the dims they are declared
  // with. For rewrites that hold at particular shapes only (instantiated
  // structural rewrites such as merging convolutions of different kernels);
  // proved rules hold at every shape and leave this false.
  bool exact_variable_types = false;
};

// Both directions of a proved rule (one, when a side has no operators and so
// cannot be a pattern). Output pairs are put in order. InvalidArgument for a
// rule that does not decode or whose sides disagree on variables.
absl::StatusOr<std::vector<RewriteRule>> RewritesFromRule(const rules::Rule& rule);

// Every proved rule of a collection, both directions. Rules with other
// statuses are skipped (the optimizer only uses what Z3 proved).
absl::StatusOr<std::vector<RewriteRule>> RewritesFromCollection(const rules::RuleCollection& rules);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_RULE_H_
