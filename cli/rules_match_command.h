// `taso rules match MODEL.onnx [--rules FILE | --db DIR | --store ADDR,...]`:
// which proved rules apply to a model and where. The model is imported as
// `taso optimize` imports it; each rule is matched as the searches match it
// (optimizer/rewrite/rule_matches.h: both directions, side conditions
// checked). With a store, the store matches (RuleDb.MatchRules, candidates
// from its operator-kind index) and every shard is asked; with --rules the
// file's rules are matched here. --structural adds the rewrites the searches
// instantiate for the model (bias and activation fusion, merges).
#ifndef TASO_CLI_RULES_MATCH_COMMAND_H_
#define TASO_CLI_RULES_MATCH_COMMAND_H_

#include <ostream>

#include "cli/rules_command.h"
#include "proto/rules_db.pb.h"

namespace taso::cli {

// `filter` holds the query flags (rules_query.h); only proved rules take
// part whatever its statuses. Exit codes as RunRules: 0 listed (also when
// nothing applies); 1 error; 2 bad options or model; 3 a store unreachable.
int RunRulesMatch(const RulesOptions& options, const rules_db::ListRulesRequest& filter, std::ostream& out,
                  std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_RULES_MATCH_COMMAND_H_
