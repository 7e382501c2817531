// Which rules apply to a graph, and where: the rule index and matcher the
// searches use (RuleIndex, FindMatches: operators, parameters, inner values
// read elsewhere, weight variables, and the side conditions of each proof),
// reporting matches instead of applying them. Serves `taso rules match` and
// the rule database's MatchRules (handed to taso_rules_db by its main).
#ifndef TASO_OPTIMIZER_REWRITE_RULE_MATCHES_H_
#define TASO_OPTIMIZER_REWRITE_RULE_MATCHES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "proto/ir.pb.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"

namespace taso::optimizer {

// Matches counted per rewrite before the count is reported as capped.
constexpr int kMaxCountedMatches = 10000;

// Where each rewrite matches `graph`: one RuleMatch per rewrite with a match
// (rule_id and direction from its name: "ID" forward, "ID~" backward), with
// up to `max_sites` sites each; the rule proto is not filled.
std::vector<rules_db::RuleMatch> MatchRewrites(const Graph& graph, const std::vector<RewriteRule>& rewrites,
                                               int max_sites);

// Where the proved rules among `rules` match `graph`, both directions, in
// rule id order, each with its rule; proved rules the searches could not
// use (no trustworthy side conditions) are counted, not matched. Errors:
// InvalidArgument for a graph that does not decode.
absl::StatusOr<rules_db::MatchRulesResponse> MatchProvedRules(const ir::Graph& graph,
                                                              const std::vector<rules::Rule>& rules, int max_sites);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REWRITE_RULE_MATCHES_H_
