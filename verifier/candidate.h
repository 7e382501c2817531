// From a stored candidate pair (two member encodings of one fingerprint
// class and their output mapping) to the graphs a proof is about, and from a
// proof outcome to the rule the database keeps.
#ifndef TASO_VERIFIER_CANDIDATE_H_
#define TASO_VERIFIER_CANDIDATE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"
#include "records/spec.h"
#include "verifier/prover.h"

namespace taso::verifier {

struct CandidateGraphs {
  Graph source;
  Graph target;
  std::vector<std::pair<int, int>> outputs;  // (source output, target output)
};

// Decodes pair `pair` of `candidate_class` under the job's spec. Errors name
// the member that does not decode or the mapping that does not fit. A pair
// the re-check rejected may have no mapping; its `outputs` is then empty.
absl::StatusOr<CandidateGraphs> DecodeCandidate(const records::Spec& spec,
                                                const rules_db::CandidateClass& candidate_class,
                                                const rules_db::CandidatePair& pair);

// The rule for a decoded pair: variables (every input and weight either side
// uses, with its type), both graphs and the output pairs; no status yet.
rules::Rule RuleFromGraphs(const CandidateGraphs& graphs);

// DecodeCandidate, then RuleFromGraphs (records::PairRule).
absl::StatusOr<rules::Rule> RuleOfPair(const records::Spec& spec, const rules_db::CandidateClass& candidate_class,
                                       const rules_db::CandidatePair& pair);

// Sets a rule's status and proof fields from a proof result.
void ApplyProofResult(const ProofResult& result, const std::string& solver, const std::string& axiom_set_version,
                      rules::Rule& rule);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_CANDIDATE_H_
