// Ruling on candidate pairs no verifier reported: what the store is handed
// (taso_rules_db: verifier/renaming_proof.h, verifier/candidate.h) to derive
// the verdicts of the pairs it did not lease (rules_db.proto,
// CandidatePair.renaming_of), and to write those of a class it gave up.
#ifndef TASO_RECORDS_RENAMING_H_
#define TASO_RECORDS_RENAMING_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"
#include "records/spec.h"

namespace taso::records {

enum class RenamingOutcome {
  kProved,        // the rule is PROVED, its proof and conditions the other's renamed
  kSameVerdict,   // the other rule is not proved; this one has its verdict
  kNotDerived,    // no verdict: the forms differ, or the conditions do not carry over
};

struct RenamingVerdict {
  rules::Rule rule;  // the pair's rule, with a verdict unless kNotDerived; its id when the prover computed it
  RenamingOutcome outcome = RenamingOutcome::kNotDerived;
  std::string why_not;  // kNotDerived: for the log
};

// The verdict of pair `pair` of `candidate_class` (a job with spec `spec`)
// given the rule the prover was made for. An error only when the pair does
// not decode.
using PairProver = std::function<absl::StatusOr<RenamingVerdict>(
    const Spec& spec, const rules_db::CandidateClass& candidate_class, const rules_db::CandidatePair& pair)>;

// Makes the prover of the pairs whose renaming_of names `other` (the stored
// rule, or an empty one when the store lost it). The store makes one per
// rule it derives from and gives it that rule's pairs, so whatever the proof
// needs of `other` is worked out once.
using RenamingProver = std::function<PairProver(const rules::Rule& other)>;

// The rule pair `pair` of `candidate_class` stands for: its variables, both
// graphs and the output pairs, with no status yet. An error only when the
// pair does not decode.
using PairRule = std::function<absl::StatusOr<rules::Rule>(
    const Spec& spec, const rules_db::CandidateClass& candidate_class, const rules_db::CandidatePair& pair)>;

}  // namespace taso::records

#endif  // TASO_RECORDS_RENAMING_H_
