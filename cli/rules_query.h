// The query flags of `taso rules list|export|fuzz|match` as a ListRulesRequest
// (rules_db/rule_filter.h evaluates it, in the store or over a union of
// shards): operators (--op any, --op-all every, --only-ops no other), size,
// job, --pattern with --side, and --axiom, checked here so a typo is a usage
// error rather than an empty answer.
#ifndef TASO_CLI_RULES_QUERY_H_
#define TASO_CLI_RULES_QUERY_H_

#include "absl/status/status.h"
#include "cli/rules_command.h"
#include "proto/rules_db.pb.h"

namespace taso::cli {

// Adds the options' filters (all but --status) to `request`. InvalidArgument
// naming the flag for an unknown operator, side or axiom, or a bad pattern.
absl::Status AddQueryFilters(const RulesOptions& options, rules_db::ListRulesRequest& request);

}  // namespace taso::cli

#endif  // TASO_CLI_RULES_QUERY_H_
