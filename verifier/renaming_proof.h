// Proving a rule as a renaming of a proved one. Two rules with one form
// (core/rule_form.h) pose Z3 the same problem with other variable names: the
// same operator applications, by the signatures the proof sees, on variables
// in the same pattern. So a proof of one is a proof of the other, and the
// facts it assumed carry over node for node, in the order the form writes
// the nodes. The same holds for a rule whose form is an instance of the
// proved one's (its variables merged): its query is the general one's with
// variables set equal. The store derives the verdicts of the candidate pairs it did not
// lease this way (records/renaming.h); the carried conditions must pass the
// same check as a proof's own (RecordedConditions), or nothing is derived
// and the store proves the rule itself.
#ifndef TASO_VERIFIER_RENAMING_PROOF_H_
#define TASO_VERIFIER_RENAMING_PROOF_H_

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"
#include "records/renaming.h"
#include "records/spec.h"

namespace taso::verifier {

// records::RenamingProver: the verdicts of the pairs whose renaming_of names
// `other`. PROVED (or PRUNED) `other` of the same form, or of a form this
// rule's is an instance of (IsInstanceOf: the same law with variables
// merged): PROVED, with `other`'s axioms and its conditions carried over.
// REFUTED, TIMEOUT, UNKNOWN or REJECTED_PRECHECK `other` of the same form:
// that status, without a proof; of a more general form: not derived (the
// store proves it). A pair whose derivation is DERIVATION_FROM_SMALLER_RULE
// is proved from `other` as from a smaller rule (ProveRuleFromSmaller).
// `other`'s form is made once, here.
records::PairProver RenamingProverFor(const rules::Rule& other);

// The same for a rule already built: `rule`'s verdict given `other`.
records::RenamingVerdict ProveRuleAsRenaming(rules::Rule rule, const rules::Rule& other);

// `rule`'s verdict given `smaller`, a proved rule of the form (or a more
// general form) of one of `rule`'s common-subgraph reductions
// (CommonSubgraphReductions): `rule` is `smaller` with a variable set to an
// operator on variables, so a proof of `smaller` proves it. PROVED with
// `smaller`'s axioms and conditions carried over, and that operator's own
// signatures on both sides; not derived otherwise (the store proves it).
records::RenamingVerdict ProveRuleFromSmaller(rules::Rule rule, const rules::Rule& smaller);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_RENAMING_PROOF_H_
