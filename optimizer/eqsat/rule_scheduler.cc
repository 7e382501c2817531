#include "optimizer/eqsat/rule_scheduler.h"

#include <algorithm>
#include <limits>

namespace taso::optimizer {
namespace {

// Doubling that stops short of overflow.
int Doubled(int n) { return n > std::numeric_limits<int>::max() / 2 ? std::numeric_limits<int>::max() : 2 * n; }

}  // namespace

RuleScheduler::RuleScheduler(int num_rules, const RuleSchedulerOptions& options) : options_(options) {
  RuleState initial;
  initial.limit = std::max(1, options.match_limit);
  initial.ban_length = std::max(1, options.ban_length);
  rules_.assign(num_rules, initial);
}

bool RuleScheduler::Searchable(int rule, int iteration) const { return iteration >= rules_[rule].banned_until; }

int RuleScheduler::SearchLimit(int rule) const {
  const int limit = rules_[rule].limit;
  return options_.backoff && limit < std::numeric_limits<int>::max() ? limit + 1 : limit;
}

bool RuleScheduler::Admit(int rule, int iteration, bool exceeded, bool may_ban) {
  if (!exceeded) return true;
  RuleState& r = rules_[rule];
  r.limit = Doubled(r.limit);
  if (!options_.backoff || !may_ban) {
    // Matches are enumerated in the same order every round: a rule cut short
    // gets twice the room next round, or it would never get past the
    // matches it already applied.
    cut_round_ = iteration;
    return true;
  }
  r.banned_until = iteration + 1 + r.ban_length;
  r.ban_length = Doubled(r.ban_length);
  ++bans_;
  return false;
}

void RuleScheduler::Hold(int rule, int iteration) {
  RuleState& r = rules_[rule];
  r.banned_until = iteration + 1 + r.ban_length;
  r.ban_length = Doubled(r.ban_length);
  ++bans_;
  ++holds_;
}

int RoundRoom(int enodes, int node_limit) { return std::max(0, node_limit - enodes) / 2; }

bool RuleScheduler::Pending(int iteration) const {
  if (cut_round_ == iteration) return true;
  if (!options_.backoff) return false;
  for (const RuleState& r : rules_) {
    if (r.banned_until > iteration) return true;
  }
  return false;
}

void RuleScheduler::LiftBans(int iteration) {
  for (RuleState& r : rules_) r.banned_until = std::min(r.banned_until, iteration);
}

}  // namespace taso::optimizer
