// TASO's redundancy pruning (its §4), applied to proved rules only and only
// where the more general rule is itself proved. Works on IR graphs, so it
// applies to imported rules as to generated ones.
//
//   renaming: a rule equal to another up to a renaming of its variables, or
//     an instance of a more general one (variables merged: TASO's
//     non-injective renaming), or the same rule read right to left.
//   common subgraph: both sides compute the same operator on the same
//     variables; with that operator's output made a fresh variable the pair
//     is a smaller proved rule.
//   common supergraph: both sides end in the same operator with the same
//     operands but one, and the differing operands are a smaller proved rule.
//
// A rule is matched against known ones two ways: by its structure with
// variables named by first occurrence and operators written as their Z3
// signature (equal structure is an equal proof; a merged-variable pattern is
// an instance), and by name, up to renaming variables of equal type, through
// a union-find of the sides of proved rules (so equalities compose).
#ifndef TASO_VERIFIER_PRUNING_H_
#define TASO_VERIFIER_PRUNING_H_

#include <string>
#include <vector>

#include "proto/rules.pb.h"

namespace taso::verifier {

struct ReductionTable {
  int64_t proved = 0;              // PROVED rules before pruning
  int64_t after_renaming = 0;      // left after renaming/instance pruning
  int64_t after_common_subgraph = 0;  // left after both common-subgraph forms
  int64_t pruned_renaming = 0;
  int64_t pruned_subgraph = 0;
  int64_t pruned_supergraph = 0;
};

// Marks redundant PROVED rules in `rules` as PRUNED, with status_detail
// naming the reason and the rule (by id) that implies them. Rules are taken
// smallest first; ties keep the first in the given order. Rules with other
// statuses are left alone and never used as the general rule. Rules whose
// graphs do not decode are left alone.
ReductionTable PruneRules(std::vector<rules::Rule>& rules);

// The renaming-invariant key of a rule (both directions give the same key);
// empty if the graphs do not decode.
std::string RuleRenamingKey(const rules::Rule& rule);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_PRUNING_H_
