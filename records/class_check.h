// What checking a fingerprint class yields: which member is the pairs'
// source (the first in canonical renaming order) and, per candidate pair,
// whether it survived the exact re-check. The generator computes it (generator/recheck.h); the hash store
// stores it in each CandidateClass, and is handed the check by its binary.
#ifndef TASO_RECORDS_CLASS_CHECK_H_
#define TASO_RECORDS_CLASS_CHECK_H_

#include <functional>
#include <string>
#include <vector>

#include "records/spec.h"

namespace taso::records {

struct PairCheck {
  int source = 0;  // member indices
  int target = 0;
  bool rejected = false;
  std::string reason;
  std::vector<int> output_mapping;  // source output i equals target output mapping[i]
  // TASO's generator would have dropped this pair as following from a smaller
  // one (its common-subgraph and common-supergraph checks). Kept here: the
  // verifier prunes only once the smaller rule is proved. Counted so that our
  // figures can be set beside TASO's.
  bool taso_would_drop = false;
  // For a pair that survived: the id of the rule it stands for
  // (records/rule_id.h) and its renaming key (core/rule_form.h). Pairs with
  // one key are one proof; the store proves the first and derives the rest.
  // Empty when not computed (the pair is then proved on its own).
  std::string rule_id;
  std::string renaming_key;
  // The FormKey of the pair read the other way (the larger of the two), so
  // the store can find the forms this one is an instance of either way.
  std::string reversed_key;
  // The renaming keys of the smaller pairs this one follows from (pruning's
  // reductions, SmallerRulesImplying: outputs both sides compute alike
  // dropped, an operator both sides compute on the same variables made a
  // variable, or the operator both sides end in taken off), distinct: when
  // one is the key of a smaller rule of the job, the store derives this
  // pair's verdict from that rule's instead of leasing it.
  std::vector<std::string> smaller_rule_keys;
};

struct ClassCheck {
  // Per member: in canonical renaming order. Members are examined in order
  // only until the first canonical one, the pairs' source (renaming order
  // takes a key per permutation: at size 4 it was a seventh of finalizing),
  // so the later ones read false whatever their order.
  std::vector<bool> canonical;
  std::vector<PairCheck> pairs;
};

// Checks one class: `members` are its graph encodings, distinct, in a fixed
// order. Called from several threads at once.
using ClassChecker = std::function<ClassCheck(const std::vector<std::string>& members)>;
// Makes the checker of one job's classes from the job's spec.
using ClassCheckerFactory = std::function<ClassChecker(const Spec& spec)>;

}  // namespace taso::records

#endif  // TASO_RECORDS_CLASS_CHECK_H_
