// A rewrite: one direction of a verified rule, as the search applies it.
// The left side is a pattern (its inputs and weights are variables that bind
// to tensors of the graph being optimized); the right side is what replaces
// it. Rules are shape-polymorphic: the prover showed them for any tensors the
// operators accept, so variables match tensors of any shape and the rewrite
// is checked by shape inference when it is applied.
#ifndef TASO_OPTIMIZER_REWRITE_REWRITE_RULE_H_
#define TASO_OPTIMIZER_REWRITE_REWRITE_RULE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/side_conditions.h"
#include "proto/rules.pb.h"

namespace taso::optimizer {

// One side of a rule as a search reads it: its graph and, per node, the
// signatures the proof assumed (core/side_conditions.h; empty for structural
// rewrites, which are instantiated at the host's own shapes and need no
// proof). Immutable and shared: a rule's two directions hold the same two
// sides, and copying a rewrite copies no graph (a size-4 rule set is 185,000
// rewrites).
struct RuleSide {
  Graph graph;
  GraphConditions conditions;
};

struct RewriteRule {
  std::string name;  // "<rule id>" or "<rule id>~" for the backward direction
  // The pattern: its sources are variables, by name.
  const Graph& lhs() const { return Side(lhs_side).graph; }
  // The replacement, over the same variable names; lhs().outputs()[i] is
  // replaced by rhs().outputs()[i].
  const Graph& rhs() const { return Side(rhs_side).graph; }
  // What the rule's proof assumed, per node of lhs and of rhs: the rewrite
  // holds only where every operator of the matched side and of the built
  // replacement keeps the signature it had in the proof, which both searches
  // check.
  const GraphConditions& lhs_conditions() const { return Side(lhs_side).conditions; }
  const GraphConditions& rhs_conditions() const { return Side(rhs_side).conditions; }
  // New sides (not shared with any other rewrite).
  void SetSides(Graph lhs, Graph rhs, GraphConditions lhs_conditions = {}, GraphConditions rhs_conditions = {});
  void SetConditions(GraphConditions lhs_conditions, GraphConditions rhs_conditions);

  std::shared_ptr<const RuleSide> lhs_side, rhs_side;  // null: an empty side
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
  // The left side's outputs are interchangeable: permuting them (with their
  // variables) gives the same rewrite up to the order of what it builds
  // (e.g. the weights of a merge concatenated in another order). A search
  // then takes each set of roots in one order only: host roots in ascending
  // node (backtracking) or e-class (eqsat) id.
  bool symmetric_outputs = false;
  // For a multi-output rule: the rounds eqsat runs it in (0: the search's
  // default for multi-output rules). Rules whose instances cover each
  // combination at once need one round; more would merge merges again.
  int eqsat_rounds = 0;

 private:
  static const RuleSide& Side(const std::shared_ptr<const RuleSide>& side);
};

// A rewrite from its two sides, operator counts taken from them: for the
// rewrites instantiated at a graph's shapes (structural_rules.h,
// matmul_rules.h), which carry no proof conditions.
RewriteRule RewriteFromSides(std::string name, Graph lhs, Graph rhs, std::vector<std::string> weight_variables,
                             bool exact_variable_types);

// The activation parameter an activation operator folds into (conv2d and
// matmul take one), or nullopt for other operators.
std::optional<Activation> ActivationOfKind(OpKind kind);

// Whether rewrite node `rule_node` of a side with `conditions`, realised as an
// operator on inputs of these types, keeps the facts the proof assumed; fact
// variables bind in `facts` when given (ConditionsHold). Always true for a
// rewrite without conditions (structural).
bool KeepsProof(const GraphConditions& conditions, int rule_node, OpKind kind, const OpParams& params,
                const std::vector<TensorType>& inputs, int num_outputs, FactBinding* facts = nullptr);

// The proved rules of a collection as rewrites, and the proved rules that
// could not be used, with why: a rule whose proof recorded no side
// conditions (or under another signature vocabulary) is not used, since
// nothing says where it holds.
// Where a rule set came from, for the report (rule_source.h fills it).
enum class RuleOrigin {
  kNone,     // no proved rules: structural rewrites only (--rules none)
  kBuiltIn,  // the proved size-3 set compiled into the binary
  kFile,     // a RuleCollection file (--rules FILE)
  kStore,    // one or more taso_rules_db stores
  kLocalDatabase,  // the store directories of `taso generate --db DIR`, read by a local store
};

struct RuleProvenance {
  RuleOrigin origin = RuleOrigin::kNone;
  std::string location;  // the file, or the store addresses; empty for the others
  // SHA-256 over the proved rules' content (id, variables, sides, output
  // pairs, side conditions), sorted by id: the same rules give the same
  // digest whether they came from a file, a store or the binary.
  std::string digest;
  int proved_rules = 0;
};

struct RuleSet {
  std::vector<RewriteRule> rewrites;
  int unusable = 0;
  std::string first_unusable;  // "rule ID: reason"
  RuleProvenance provenance;
};

// Both directions of a proved rule (one, when a side has no operators and so
// cannot be a pattern). Output pairs are put in order. InvalidArgument for a
// rule that does not decode or whose sides disagree on variables;
// FailedPrecondition for one without trustworthy side conditions.
absl::StatusOr<std::vector<RewriteRule>> RewritesFromRule(const rules::Rule& rule);

// Every proved rule of a collection, both directions. Rules with other
// statuses are skipped (the optimizer only uses what Z3 proved); proved rules
// without side conditions are counted in `unusable`.
absl::StatusOr<RuleSet> RewritesFromCollection(const rules::RuleCollection& rules);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_REWRITE_RULE_H_
