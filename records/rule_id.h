// A rule's stable id, from its content: "r" and 16 hex digits of a hash of
// both sides' canonical text and the output pairs. The store files rules
// under it (the same rule found twice is one rule), and whoever reads rules
// (the optimizer, a rules file, another store) can check that an id names
// the content it is filed with.
#ifndef TASO_RECORDS_RULE_ID_H_
#define TASO_RECORDS_RULE_ID_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "proto/rules.pb.h"

namespace taso::records {

absl::StatusOr<std::string> RuleIdOf(const Graph& source, const Graph& target,
                                     const std::vector<std::pair<int, int>>& outputs);

// The same from both sides' CanonicalText (core/canonical.h), for a caller
// that pairs one source with many targets and writes its text once.
std::string RuleIdOfTexts(std::string_view source_text, std::string_view target_text,
                          const std::vector<std::pair<int, int>>& outputs);

// The id of `rule`'s graphs and output pairs (its own id field is not read).
// InvalidArgument naming the side when a graph is malformed.
absl::StatusOr<std::string> RuleId(const rules::Rule& rule);

}  // namespace taso::records

#endif  // TASO_RECORDS_RULE_ID_H_
