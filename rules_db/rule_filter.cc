#include "rules_db/rule_filter.h"

#include <algorithm>
#include <set>

namespace taso::rules_db {
namespace {

bool IsVariable(ir::OpKind k) { return k == ir::OP_INPUT || k == ir::OP_WEIGHT; }

int OpCount(const ir::Graph& g) {
  int n = 0;
  for (const auto& node : g.nodes()) n += !IsVariable(node.kind());
  return n;
}

}  // namespace

bool RuleMatches(const rules::Rule& rule, const ListRulesRequest& r) {
  const auto& statuses = r.statuses();
  const rules::RuleStatus wanted_default = rules::RULE_STATUS_PROVED;
  if (statuses.empty() ? rule.status() != wanted_default
                       : std::find(statuses.begin(), statuses.end(), rule.status()) == statuses.end()) {
    return false;
  }
  if (!r.job_id().empty() && rule.provenance().job_id() != r.job_id()) return false;
  if (r.max_ops() > 0 && std::max(OpCount(rule.source()), OpCount(rule.target())) > r.max_ops()) return false;
  std::set<int> kinds;
  for (const ir::Graph* g : {&rule.source(), &rule.target()}) {
    for (const auto& node : g->nodes()) {
      if (!IsVariable(node.kind())) kinds.insert(node.kind());
    }
  }
  if (!r.any_op_kinds().empty() &&
      std::none_of(r.any_op_kinds().begin(), r.any_op_kinds().end(), [&](int k) { return kinds.count(k) > 0; })) {
    return false;
  }
  if (!r.allowed_op_kinds().empty()) {
    for (int k : kinds) {
      if (std::find(r.allowed_op_kinds().begin(), r.allowed_op_kinds().end(), k) == r.allowed_op_kinds().end()) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace taso::rules_db
