#include "rules_db/match_response.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace taso::rules_db {

void MergeMatchResponse(MatchRulesResponse part, MatchRulesResponse& into) {
  auto before = [](const RuleMatch& a, const RuleMatch& b) {
    return std::make_pair(a.rule_id(), a.backward()) < std::make_pair(b.rule_id(), b.backward());
  };
  std::vector<RuleMatch> merged;
  merged.reserve(into.matches_size() + part.matches_size());
  std::merge(std::make_move_iterator(into.mutable_matches()->begin()),
             std::make_move_iterator(into.mutable_matches()->end()),
             std::make_move_iterator(part.mutable_matches()->begin()),
             std::make_move_iterator(part.mutable_matches()->end()), std::back_inserter(merged), before);
  into.clear_matches();
  for (RuleMatch& m : merged) *into.add_matches() = std::move(m);
  into.set_rules_read(into.rules_read() + part.rules_read());
  into.set_rules_matched(into.rules_matched() + part.rules_matched());
  if (into.rules_unusable() == 0) into.set_first_unusable(part.first_unusable());
  into.set_rules_unusable(into.rules_unusable() + part.rules_unusable());
  into.set_used_op_index(into.used_op_index() && part.used_op_index());
}

}  // namespace taso::rules_db
