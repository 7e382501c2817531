// Where the optimizer's rules come from: a RuleCollection file (`taso rules
// export --format proto`), or a running rule database. Only PROVED rules are
// used, and only those that recorded their side conditions; each becomes a
// rewrite in both directions. RuleSet counts the proved rules left unused.
#ifndef TASO_OPTIMIZER_RULE_SOURCE_H_
#define TASO_OPTIMIZER_RULE_SOURCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "optimizer/rewrite_rule.h"

namespace taso::optimizer {

// A binary RuleCollection (or, by extension .json, its JSON form).
// InvalidArgument naming the file when it does not parse.
absl::StatusOr<RuleSet> LoadRulesFile(const std::string& path);
// The same file's rules as stored, every status.
absl::StatusOr<rules::RuleCollection> ReadRulesFile(const std::string& path);

// Proved rules from taso_rules_db at `address` whose larger side has at most
// `max_ops` operators (0: any). Unavailable when the store is unreachable.
// `address` may list every store shard, comma-separated: the rules are the
// union. Each shard pruned its own slice; rules redundant only across shards
// stay (proved, merely redundant): for the set pruned across shards, use
// `taso rules export --store LIST --format proto -o F` and --rules F.
absl::StatusOr<RuleSet> FetchRules(const std::string& address, int max_ops = 0);

// What a tool given `--rules FILE` or a rule database address uses: the
// file when named, else the database when named (as FetchRules), else no
// rules at all (an empty set: only structural rewrites).
absl::StatusOr<RuleSet> LoadRules(const std::string& file, const std::string& address, int max_ops = 0);

// "N proved rules not used (rule ID: why); re-verify them ...", or empty
// when every proved rule is usable: what a tool prints after loading.
std::string UnusableRulesWarning(const RuleSet& rules);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_RULE_SOURCE_H_
