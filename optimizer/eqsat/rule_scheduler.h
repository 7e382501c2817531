// Which rules equality saturation searches and applies each round.
//
// The backoff scheduler (egg's idea): each rule has a match limit; a rule
// whose matches in a round exceed it is not applied that round and is banned
// for some rounds, and each ban doubles both the rule's limit and the length
// of its next ban. A few prolific rules (commutativity, associativity) so
// cannot fill the e-graph before the other rules' rewrites are in it.
//
// Saturate adds a second reason to ban (Hold): a rule within its limit
// whose matches would add more e-nodes than the round's room (RoundRoom).
//
// Without it (the behaviour before), every rule applies up to a cap of
// matches per round, and a rule cut short gets twice the cap next round.
#ifndef TASO_OPTIMIZER_EQSAT_RULE_SCHEDULER_H_
#define TASO_OPTIMIZER_EQSAT_RULE_SCHEDULER_H_

#include <vector>

namespace taso::optimizer {

struct RuleSchedulerOptions {
  bool backoff = true;
  // Matches a rule may have in a round at first: before its first ban with
  // backoff, applied per round without.
  int match_limit = 1000;
  int ban_length = 5;  // backoff: rounds of the first ban
};

// The e-nodes a round may add with backoff: half the room left under
// `node_limit`, so that rounds never reach it (each leaves room for the
// next) and the rules that match least come first.
int RoundRoom(int enodes, int node_limit);

class RuleScheduler {
 public:
  RuleScheduler(int num_rules, const RuleSchedulerOptions& options);

  // Whether `rule` is searched in round `iteration` (it is not banned).
  bool Searchable(int rule, int iteration) const;
  // How many matches to enumerate for `rule`: one more than its limit under
  // backoff, so that exceeding it shows.
  int SearchLimit(int rule) const;
  // Records the round's search of `rule` (`exceeded`: the enumeration was cut
  // at SearchLimit) and returns whether its matches are applied. A rule that
  // may not be banned (multi-output rules, which only run in the first
  // rounds) is applied up to its limit instead, the limit doubling.
  bool Admit(int rule, int iteration, bool exceeded, bool may_ban = true);
  // Bans `rule` from round `iteration` on although it kept within its match
  // limit: its matches would add more e-nodes than the round may (the
  // e-graph's room, RoundRoom). Counted, lengthened and lifted like any ban.
  void Hold(int rule, int iteration);
  // Whether some rule is banned in round `iteration` or, without backoff, a
  // rule was cut short this round: the e-graph is not saturated then.
  bool Pending(int iteration) const;
  // Lifts every ban from round `iteration` on (their limits stay raised):
  // for a round that changed nothing while rules were banned.
  void LiftBans(int iteration);
  int bans() const { return bans_; }
  int holds() const { return holds_; }

 private:
  struct RuleState {
    int limit = 0;
    int ban_length = 0;
    int banned_until = 0;  // first round the rule is searched again
  };
  RuleSchedulerOptions options_;
  std::vector<RuleState> rules_;
  int bans_ = 0;
  int holds_ = 0;  // of bans_, those for room (Hold)
  int cut_round_ = -1;  // the last round a rule was cut short rather than banned
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_EQSAT_RULE_SCHEDULER_H_
