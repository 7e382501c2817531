// Putting MatchRules answers together: the store's, chunk by chunk, and a
// reader's over several store shards (`taso rules match --store A,B`).
#ifndef TASO_RULES_DB_MATCH_RESPONSE_H_
#define TASO_RULES_DB_MATCH_RESPONSE_H_

#include "proto/rules_db.pb.h"

namespace taso::rules_db {

// Adds `part` to `into`: matches merged in (rule id, direction) order (each
// list is in that order already), counts summed, the first unusable rule
// kept. used_op_index holds only if both used the index.
void MergeMatchResponse(MatchRulesResponse part, MatchRulesResponse& into);

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_MATCH_RESPONSE_H_
