#include "optimizer/report_proto.h"

#include "absl/strings/match.h"

namespace taso::optimizer {

Report ReportToProto(const OptimizeReport& r) {
  Report out;
  out.set_cost_before_ms(r.cost_before_ms);
  out.set_cost_after_ms(r.cost_after_ms);
  out.set_search_time_ms(absl::ToInt64Milliseconds(r.search_time));
  out.set_total_time_ms(absl::ToInt64Milliseconds(r.total_time));
  const std::string& why = r.stop_reason;
  out.set_stop_reason(absl::StrContains(why, "time limit")        ? STOP_REASON_TIME_LIMIT
                      : absl::StrContains(why, "node limit")      ? STOP_REASON_NODE_LIMIT
                      : absl::StrContains(why, "budget") ||
                              absl::StrContains(why, "iteration limit") ? STOP_REASON_BUDGET
                                                                  : STOP_REASON_CONVERGED);
  out.set_stop_detail(why);
  out.set_search(r.search);
  for (const auto& [rule, count] : r.rules_applied) {
    RuleApplication* a = out.add_rules_applied();
    a->set_rule_id(rule);
    a->set_count(count);
  }
  for (const std::string& op : r.opaque_operators) out.add_opaque_operators(op);
  out.set_verified_numerically(r.check.ran && r.check.equal);
  out.set_max_abs_error(r.check.max_abs_diff);
  out.set_check_detail(r.check.reason);
  out.set_check_seed(r.check.seed);
  out.set_nodes_before(r.operators_before);
  out.set_nodes_after(r.operators_after);
  out.set_returned_original(r.returned_original);
  out.set_error(r.error);
  out.set_costs_are_estimates(r.costs_are_estimates);
  out.set_cost_device(r.cost_device);
  out.set_batchnorms_folded(r.batchnorms_folded);
  out.set_constants_folded(r.constants_folded);
  out.set_epilogues_fused(r.epilogues_fused);
  out.set_rules_available(r.rules_available);
  return out;
}

}  // namespace taso::optimizer
