#include "optimizer/report_proto.h"

namespace taso::optimizer {

namespace {

StopReason StopReasonToProto(SearchStop stop) {
  switch (stop) {
    case SearchStop::kUnspecified:
      return STOP_REASON_UNSPECIFIED;
    case SearchStop::kQueueExhausted:
    case SearchStop::kSaturated:
    case SearchStop::kGoalReached:
      return STOP_REASON_CONVERGED;
    case SearchStop::kBudget:
    case SearchStop::kIterationLimit:
      return STOP_REASON_BUDGET;
    case SearchStop::kNodeLimit:
      return STOP_REASON_NODE_LIMIT;
    case SearchStop::kTimeLimit:
      return STOP_REASON_TIME_LIMIT;
  }
  return STOP_REASON_UNSPECIFIED;
}

RulesOrigin RulesOriginToProto(RuleOrigin origin) {
  switch (origin) {
    case RuleOrigin::kNone:
      return RULES_NONE;
    case RuleOrigin::kBuiltIn:
      return RULES_BUILT_IN;
    case RuleOrigin::kFile:
      return RULES_FILE;
    case RuleOrigin::kStore:
      return RULES_STORE;
    case RuleOrigin::kLocalDatabase:
      return RULES_LOCAL_DATABASE;
  }
  return RULES_ORIGIN_UNSPECIFIED;
}

ExtractionStatus ExtractionStatusToProto(ExtractionOutcome outcome) {
  switch (outcome) {
    case ExtractionOutcome::kNotRun:
      return EXTRACTION_UNSPECIFIED;
    case ExtractionOutcome::kIlpOptimal:
      return EXTRACTION_ILP_OPTIMAL;
    case ExtractionOutcome::kIlpTimeLimit:
      return EXTRACTION_ILP_TIME_LIMIT;
    case ExtractionOutcome::kIlpStopped:
      return EXTRACTION_ILP_STOPPED;
    case ExtractionOutcome::kGreedy:
      return EXTRACTION_GREEDY;
    case ExtractionOutcome::kGreedyIlpFailed:
      return EXTRACTION_GREEDY_ILP_FAILED;
    case ExtractionOutcome::kFailed:
      return EXTRACTION_FAILED;
  }
  return EXTRACTION_UNSPECIFIED;
}

MeasurementOutcome MeasurementToProto(MeasureVerdict outcome) {
  switch (outcome) {
    case MeasureVerdict::kUnspecified: return MEASUREMENT_OUTCOME_UNSPECIFIED;
    case MeasureVerdict::kKeptCandidate: return MEASURED_KEPT_CANDIDATE;
    case MeasureVerdict::kKeptBaseline: return MEASURED_KEPT_BASELINE;
    case MeasureVerdict::kSkippedDisabled: return SKIPPED_DISABLED;
    case MeasureVerdict::kSkippedBackendCannotRun: return SKIPPED_BACKEND_CANNOT_RUN;
    case MeasureVerdict::kFailed: return FAILED;
    case MeasureVerdict::kSkippedInputReturned: return SKIPPED_INPUT_RETURNED;
    case MeasureVerdict::kSkippedBelowMinGain: return SKIPPED_BELOW_MIN_GAIN;
    case MeasureVerdict::kOutputsDiffer: return OUTPUTS_DIFFER;
    case MeasureVerdict::kKeptReexport: return MEASURED_KEPT_REEXPORT;
  }
  return MEASUREMENT_OUTCOME_UNSPECIFIED;
}

RuntimeCheckOutcome RuntimeCheckToProto(RuntimeCheckVerdict verdict) {
  switch (verdict) {
    case RuntimeCheckVerdict::kNotReached: return RUNTIME_CHECK_UNSPECIFIED;
    case RuntimeCheckVerdict::kEqual: return RUNTIME_CHECK_EQUAL;
    case RuntimeCheckVerdict::kDifferent: return RUNTIME_CHECK_DIFFERENT;
    case RuntimeCheckVerdict::kSkippedUnavailable: return RUNTIME_CHECK_SKIPPED_UNAVAILABLE;
    case RuntimeCheckVerdict::kSkipped: return RUNTIME_CHECK_SKIPPED;
    case RuntimeCheckVerdict::kFailed: return RUNTIME_CHECK_FAILED;
  }
  return RUNTIME_CHECK_UNSPECIFIED;
}

IlpOutcome IlpOutcomeToProto(IlpVerdict outcome) {
  switch (outcome) {
    case IlpVerdict::kNotApplicable: return ILP_OUTCOME_UNSPECIFIED;
    case IlpVerdict::kOptimal: return ILP_OPTIMAL;
    case IlpVerdict::kStoppedWithGap: return ILP_STOPPED_WITH_GAP;
    case IlpVerdict::kNoResult: return ILP_NO_RESULT;
  }
  return ILP_OUTCOME_UNSPECIFIED;
}

}  // namespace

Report ReportToProto(const OptimizeReport& r) {
  Report out;
  out.set_cost_before_ms(r.cost_before_ms);
  out.set_cost_after_ms(r.cost_after_ms);
  out.set_candidate_cost_ms(r.candidate_cost_ms);
  out.set_search_time_ms(absl::ToInt64Milliseconds(r.search_time));
  out.set_total_time_ms(absl::ToInt64Milliseconds(r.total_time));
  out.set_stop_reason(StopReasonToProto(r.stop_reason));
  out.set_stop_detail(r.stop_detail);
  out.set_extraction(ExtractionStatusToProto(r.extraction));
  out.set_extraction_detail(r.extraction_detail);
  out.set_search(r.search);
  for (const auto& [rule, count] : r.rules_applied) {
    RuleApplication* a = out.add_rules_applied();
    a->set_rule_id(rule);
    a->set_count(count);
    if (auto it = r.rule_rewrites.find(rule); it != r.rule_rewrites.end()) a->set_rewrite(it->second);
  }
  out.set_rules_origin(RulesOriginToProto(r.rules.origin));
  out.set_rules_location(r.rules.location);
  out.set_rules_proved(r.rules.proved_rules);
  for (const auto& [type, counts] : r.onnx_operators) {
    OperatorCount* c = out.add_onnx_operators();
    c->set_op_type(type);
    c->set_before(counts.first);
    c->set_after(counts.second);
  }
  for (const std::string& op : r.opaque_operators) out.add_opaque_operators(op);
  out.set_verified_numerically(r.check.ran && r.check.equal);
  out.set_max_abs_error(r.check.max_abs_diff);
  out.set_check_detail(r.check.reason);
  out.set_check_seed(r.check.seed);
  out.set_runtime_check(RuntimeCheckToProto(r.runtime_check.verdict));
  out.set_runtime_max_abs_error(r.runtime_check.max_abs_diff);
  out.set_runtime_max_rel_error(r.runtime_check.max_rel_diff);
  out.set_runtime_check_detail(r.runtime_check.reason);
  for (const profiler::OutputDifference& d : r.runtime_check.outputs) *out.add_runtime_outputs() = d;
  out.set_nodes_before(r.operators_before);
  out.set_nodes_after(r.operators_after);
  out.set_returned_original(r.returned_original);
  out.set_error(r.error);
  out.set_costs_are_estimates(r.costs_are_estimates);
  for (const auto& [signature, why] : r.unmeasured_operators) (*out.mutable_unmeasured_operators())[signature] = why;
  out.set_cost_device(r.cost_device);
  out.set_cost_backend(r.cost_backend);
  out.set_threads(r.threads);
  out.set_cost_backend_choice(r.cost_backend_choice);
  out.set_target(r.dialect == OnnxDialect::kOnnxRuntime ? EXPORT_TARGET_ORT : EXPORT_TARGET_ONNX);
  for (const std::string& shape : r.input_shapes) out.add_input_shapes(shape);
  out.set_batchnorms_folded(r.batchnorms_folded);
  out.set_constants_folded(r.constants_folded);
  out.set_cse_merged(r.cse_merged);
  out.set_epilogues_fused(r.epilogues_fused);
  out.set_transpose_pairs_removed(r.transpose_pairs_removed);
  out.set_rules_available(r.rules_available);
  out.set_rules_unreachable(r.rules_unreachable);
  out.set_cost_raw_ms(r.cost_raw_ms);
  out.set_cost_baseline_ms(r.cost_baseline_ms);
  for (const std::string& note : r.import_notes) out.add_import_notes(note);
  out.set_rule_bans(r.rule_bans);
  out.set_cost_model(r.cost_model);
  out.set_measured_baseline_ms(r.measured_baseline_ms);
  out.set_measured_after_ms(r.measured_after_ms);
  out.set_measured_runs(r.measured_runs);
  out.set_measured_speedup(r.measured_speedup);
  out.set_measured_backend(r.measured_backend);
  out.set_measurement(MeasurementToProto(r.measurement));
  out.set_measurement_detail(r.measurement_detail);
  out.set_output_is_input(r.output_is_input);
  out.set_exploration_ms(absl::ToInt64Milliseconds(r.exploration_time));
  out.set_costing_ms(absl::ToInt64Milliseconds(r.costing_time));
  out.set_extraction_ms(absl::ToInt64Milliseconds(r.extraction_time));
  out.set_ilp_outcome(IlpOutcomeToProto(r.ilp));
  out.set_ilp_incumbent_ms(r.ilp_incumbent_ms);
  out.set_extraction_cost_ms(r.extraction_cost_ms);
  out.set_ilp_bound_ms(r.ilp_bound_ms);
  out.set_ilp_gap(r.ilp_gap);
  out.set_ilp_time_limit_ms(absl::ToInt64Milliseconds(r.ilp_time_limit));
  out.set_taso_version(r.taso_version);
  out.set_rules_digest(r.rules_digest);
  out.set_input_sha256(r.input_sha256);
  out.set_output_sha256(r.output_sha256);
  out.set_enodes(r.enodes);
  out.set_eclasses(r.eclasses);
  return out;
}

RuleProvenance RuleProvenanceFromReport(const Report& report) {
  RuleProvenance rules;
  switch (report.rules_origin()) {
    case RULES_BUILT_IN: rules.origin = RuleOrigin::kBuiltIn; break;
    case RULES_FILE: rules.origin = RuleOrigin::kFile; break;
    case RULES_STORE: rules.origin = RuleOrigin::kStore; break;
    case RULES_LOCAL_DATABASE: rules.origin = RuleOrigin::kLocalDatabase; break;
    default: rules.origin = RuleOrigin::kNone; break;
  }
  rules.location = report.rules_location();
  rules.digest = report.rules_digest();
  rules.proved_rules = report.rules_proved();
  return rules;
}

}  // namespace taso::optimizer
