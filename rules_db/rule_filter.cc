#include "rules_db/rule_filter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace taso::rules_db {
namespace {

bool IsVariable(ir::OpKind k) { return k == ir::OP_INPUT || k == ir::OP_WEIGHT; }

// Operators of one side: their kinds as bits, and how many.
std::pair<uint64_t, int> SideKinds(const ir::Graph& g) {
  uint64_t mask = 0;
  int n = 0;
  for (const auto& node : g.nodes()) {
    if (IsVariable(node.kind())) continue;
    mask |= uint64_t{1} << node.kind();
    ++n;
  }
  return {mask, n};
}

taso::PatternSide SideOf(rules_db::PatternSide side) {
  switch (side) {
    case PATTERN_SIDE_SOURCE: return taso::PatternSide::kSource;
    case PATTERN_SIDE_TARGET: return taso::PatternSide::kTarget;
    default: return taso::PatternSide::kEither;
  }
}

}  // namespace

uint64_t GraphKinds(const ir::Graph& graph) { return SideKinds(graph).first; }

RuleKinds KindsOf(const rules::Rule& rule) {
  const auto [source, source_ops] = SideKinds(rule.source());
  const auto [target, target_ops] = SideKinds(rule.target());
  return RuleKinds{source, target, std::max(source_ops, target_ops)};
}

absl::StatusOr<RuleFilter> RuleFilter::Create(const ListRulesRequest& request) {
  RuleFilter filter(request);
  filter.any_ = KindMask(request.any_op_kinds());
  filter.all_ = KindMask(request.all_op_kinds());
  filter.allowed_ = KindMask(request.allowed_op_kinds());
  if (!request.pattern().empty()) {
    auto pattern = RulePattern::Parse(request.pattern());
    if (!pattern.ok()) return pattern.status();
    filter.pattern_ = *std::move(pattern);
    filter.side_ = SideOf(request.pattern_side());
  }
  return filter;
}

bool RuleFilter::KindsPass(const RuleKinds& kinds) const {
  const uint64_t used = kinds.both();
  if (request_.max_ops() > 0 && kinds.max_ops > request_.max_ops()) return false;
  if (any_ != 0 && (used & any_) == 0) return false;
  if ((used & all_) != all_) return false;
  if (allowed_ != 0 && (used & ~allowed_) != 0) return false;
  return true;
}

uint64_t RuleFilter::IndexKinds() const {
  if (all_ != 0) return all_ & -all_;  // one list: each rule wanted is in all of them
  if (any_ != 0) return any_;
  return allowed_;
}

bool RuleFilter::Matches(const rules::Rule& rule) const {
  const auto& statuses = request_.statuses();
  if (statuses.empty() ? rule.status() != rules::RULE_STATUS_PROVED
                       : std::find(statuses.begin(), statuses.end(), rule.status()) == statuses.end()) {
    return false;
  }
  if (!request_.job_id().empty() && rule.provenance().job_id() != request_.job_id()) return false;
  if (!KindsPass(KindsOf(rule))) return false;
  const auto& used = rule.proof().axioms_used();
  for (const std::string& axiom : request_.axioms()) {
    if (std::find(used.begin(), used.end(), axiom) == used.end()) return false;
  }
  return !pattern_ || pattern_->FoundIn(rule, side_);
}

}  // namespace taso::rules_db
