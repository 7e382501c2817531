// Which rules a ListRulesRequest selects: the store's filter, shared with
// readers that filter a union of store shards themselves (taso rules).
#ifndef TASO_RULES_DB_RULE_FILTER_H_
#define TASO_RULES_DB_RULE_FILTER_H_

#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"

namespace taso::rules_db {

// True when `rule` passes every filter of `request` (statuses, PROVED when
// none; job; max_ops; any_op_kinds; allowed_op_kinds). Paging is ignored.
bool RuleMatches(const rules::Rule& rule, const ListRulesRequest& request);

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_RULE_FILTER_H_
