// Where the optimizer's rules come from: a RuleCollection file (`taso rules
// export --format proto`), or a running rule database. Only PROVED rules are
// used, and only those that recorded their side conditions; each becomes a
// rewrite in both directions. RuleSet counts the proved rules left unused.
#ifndef TASO_OPTIMIZER_RULE_SOURCE_H_
#define TASO_OPTIMIZER_RULE_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/io/zero_copy_stream.h"
#include "optimizer/rewrite/rewrite_rule.h"

namespace taso::optimizer {

// A binary RuleCollection (or, by extension .json, its JSON form).
// InvalidArgument naming the file when it does not parse.
absl::StatusOr<RuleSet> LoadRulesFile(const std::string& path);
// The same file's rules as stored, every status.
absl::StatusOr<rules::RuleCollection> ReadRulesFile(const std::string& path);
// A binary RuleCollection read field by field: protobuf parses at most 2 GB
// through one stream, and an export of millions of rules (size 4 with every
// status: 2.8 GB) is more, so the stream is replaced every `chunk_bytes`.
// False if the bytes are not a RuleCollection.
bool ParseRuleCollection(google::protobuf::io::ZeroCopyInputStream* in, rules::RuleCollection* out,
                         int64_t chunk_bytes = int64_t{256} << 20);

// Proved rules from taso_rules_db at `address` whose larger side has at most
// `max_ops` operators (0: any). Unavailable when the store is unreachable.
// `address` may list every store shard, comma-separated: the rules are the
// union. Each shard pruned its own slice; rules redundant only across shards
// stay (proved, merely redundant): for the set pruned across shards, use
// `taso rules export --store LIST --format proto -o F` and --rules F.
// `max_rules` (0: any) bounds the proved rules read: past it, ResourceExhausted
// saying to prune the job over its shards (a size-4 job holds 2.8M proved
// rules until `taso rules prune` keeps ~93k).
absl::StatusOr<RuleSet> FetchRules(const std::string& address, int max_ops = 0, int64_t max_rules = 0);

// The proved, pruned size-3 rule set compiled into this build
// (rules/default_rules.pb): what a user who never ran `taso generate` gets.
absl::StatusOr<RuleSet> LoadBuiltinRules();

// What a tool given `--rules FILE` or a rule database address uses: the
// file when named ("none": no proved rules, only structural rewrites), else
// the database when named (as FetchRules), else the built-in set.
inline constexpr char kNoRules[] = "none";
absl::StatusOr<RuleSet> LoadRules(const std::string& file, const std::string& address, int max_ops = 0);

// "built-in size-3 set: 1,181 proved rules, sha256 0123456789abcdef": one
// line saying which rules an optimization uses.
std::string DescribeRules(const RuleProvenance& rules);

// The content digest RuleProvenance::digest holds, of a collection's proved rules.
std::string RuleContentDigest(const rules::RuleCollection& collection);

// "N proved rules not used (rule ID: why); re-verify them ...", or empty
// when every proved rule is usable: what a tool prints after loading.
std::string UnusableRulesWarning(const RuleSet& rules);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_RULE_SOURCE_H_
