// Which rules a ListRulesRequest selects: the store's filter, shared with
// readers that filter a union of store shards themselves (taso rules).
#ifndef TASO_RULES_DB_RULE_FILTER_H_
#define TASO_RULES_DB_RULE_FILTER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/rule_pattern.h"
#include "proto/rules.pb.h"
#include "proto/rules_db.pb.h"

namespace taso::rules_db {

// The operators of a rule's sides as bit sets (bit = ir::OpKind; inputs and
// weights left out) and its larger side's operator count: what the
// operator-kind index stores per rule, fixed by the rule's id.
struct RuleKinds {
  uint64_t source = 0;
  uint64_t target = 0;
  int max_ops = 0;
  uint64_t both() const { return source | target; }
};
RuleKinds KindsOf(const rules::Rule& rule);
// The operator kinds of a graph as bits (inputs and weights left out).
uint64_t GraphKinds(const ir::Graph& graph);
// Whether a rule with these operators can match a graph with `graph_kinds`:
// one of its sides must use nothing else.
inline bool CanMatchKinds(const RuleKinds& rule, uint64_t graph_kinds) {
  return (rule.source & ~graph_kinds) == 0 || (rule.target & ~graph_kinds) == 0;
}

// One bit per operator kind in `kinds`.
template <typename Kinds>
uint64_t KindMask(const Kinds& kinds) {
  uint64_t mask = 0;
  for (int k : kinds) mask |= uint64_t{1} << k;
  return mask;
}

class RuleFilter {
 public:
  // InvalidArgument naming the field for a pattern that does not parse.
  static absl::StatusOr<RuleFilter> Create(const ListRulesRequest& request);

  // Whether a rule with these operators passes the operator and size filters
  // (any_op_kinds, all_op_kinds, allowed_op_kinds, max_ops): the part of the
  // filter the operator index answers without reading the rule.
  bool KindsPass(const RuleKinds& kinds) const;
  // Operator kinds (a bit set) such that every rule passing the operator
  // filters uses one of them: the operator index's lists a query reads.
  // 0 without an operator filter (the query scans).
  uint64_t IndexKinds() const;
  // True when `rule` passes every filter (statuses, PROVED when none; job;
  // the operator and size filters; pattern; axioms). Paging is ignored.
  bool Matches(const rules::Rule& rule) const;

 private:
  explicit RuleFilter(const ListRulesRequest& request) : request_(request) {}

  ListRulesRequest request_;
  uint64_t any_ = 0, all_ = 0, allowed_ = 0;
  std::optional<RulePattern> pattern_;
  taso::PatternSide side_ = taso::PatternSide::kEither;
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_RULE_FILTER_H_
