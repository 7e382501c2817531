#include "optimizer/optimize.h"

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "optimizer/onnx/onnx_export.h"
#include "optimizer/cost_model.h"
#include "optimizer/cse.h"
#include "optimizer/epilogue_fusion.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/passes.h"
#include "optimizer/runtime_baseline.h"
#include "optimizer/structural_rules.h"

namespace taso::optimizer {
namespace {

// The search alone; callers check its result against what they started from.
absl::StatusOr<GraphResult> SearchGraph(const Graph& input, const std::vector<RewriteRule>& rules,
                                        profiler::ProfilerClient& profiler, const OptimizerOptions& options) {
  GraphResult result;
  OptimizeReport& report = result.report;
  auto bn = FoldBatchNorm(input);
  if (!bn.ok()) return bn.status();
  report.batchnorms_folded = bn->changed;
  auto cse = EliminateCommonSubexpressions(bn->graph);
  if (!cse.ok()) return cse.status();
  report.cse_merged = cse->changed;
  const Graph& start = cse->graph;
  report.operators_before = input.num_ops();

  std::vector<RewriteRule> all = rules;
  if (options.structural_rules) {
    for (RewriteRule& r : StructuralRewrites(start)) all.push_back(std::move(r));
  }
  report.rules_available = static_cast<int>(all.size());
  CostModel cost(&profiler, options.backend);
  auto baseline = RuntimeBaseline(input, cost);
  if (!baseline.ok()) return baseline.status();
  const absl::Time search_start = absl::Now();
  Graph best = start;
  if (options.search == SearchKind::kEqsat) {
    EqsatOptions eq = options.eqsat;
    eq.time_limit = options.time_limit;
    // The ILP's own bound, within the caller's: optimal in seconds on the
    // benchmark models' e-graphs, greedy's choice at worst.
    eq.ilp_time_limit = std::min(options.time_limit, absl::Seconds(20));
    auto r = EqsatSearch(start, all, cost, eq);
    if (!r.ok()) return r.status();
    best = std::move(r->best);
    report.search = "eqsat";
    int applications = 0;
    for (const auto& [rule, count] : r->report.rules_applied) applications += count;
    report.stop_reason = r->report.stop_reason;
    report.stop_detail = absl::StrCat(r->report.stop_detail, " (", r->iterations, " iterations, ", r->enodes,
                                      " e-nodes, ", r->eclasses, " e-classes, ", applications,
                                      " rule applications",
                                      r->report.rule_bans > 0 ? absl::StrCat(", ", r->report.rule_bans, " rule bans") : "",
                                      "); extraction: ", r->report.extraction_detail);
    report.extraction = r->report.extraction;
    report.extraction_detail = r->report.extraction_detail;
    // The rules the result is made with, not every application in the e-graph.
    report.rules_applied = r->rules_used;
    report.rule_bans = r->report.rule_bans;
  } else {
    BacktrackOptions bt = options.backtrack;
    bt.time_limit = options.time_limit;
    auto r = BacktrackSearch(start, all, cost, bt);
    if (!r.ok()) return r.status();
    best = std::move(r->best);
    report.search = "backtrack";
    report.stop_reason = r->report.stop_reason;
    report.stop_detail = r->report.stop_detail;
    report.rules_applied = r->report.rules_applied;
  }
  report.search_time = absl::Now() - search_start;
  if (options.structural_rules) {
    auto fused = FuseEpilogues(best, cost);
    if (!fused.ok()) return fused.status();
    report.epilogues_fused = fused->changed;
    best = std::move(fused->graph);
  }
  auto folded = FoldConstants(best);
  if (!folded.ok()) return folded.status();
  report.constants_folded = folded->changed;
  result.graph = std::move(folded->graph);
  // The cost of the unfolded original, so both figures count the same things.
  auto before = cost.GraphCost(input);
  if (!before.ok()) return before.status();
  report.cost_before_ms = report.cost_raw_ms = *before;
  auto baseline_cost = cost.GraphCost(baseline->graph);
  if (!baseline_cost.ok()) return baseline_cost.status();
  report.cost_baseline_ms = *baseline_cost;
  auto after = cost.GraphCost(result.graph);
  if (!after.ok()) return after.status();
  report.cost_after_ms = *after;
  if (report.cost_after_ms > report.cost_baseline_ms) {
    // What the runtime would run anyway is cheaper: return that, never a
    // graph the cost model itself says is slower.
    result.graph = std::move(baseline->graph);
    report.cost_after_ms = report.cost_baseline_ms;
    report.stop_detail += "; the search's result cost more than the runtime baseline, which is returned";
  }
  report.cost_model = cost.Describe();
  report.costs_are_estimates = cost.any_estimate();
  report.cost_device = cost.device();
  report.operators_after = result.graph.num_ops();
  return result;
}

// Why `what` must not be returned after `check`, or "" when it may.
// Unchecked is treated as wrong: the contract is a verified model or the input.
std::string CheckFailure(const NumericCheck& check, const std::string& what) {
  if (check.ran && check.equal) return "";
  return check.ran ? absl::StrCat(what, " differs from the original (", check.reason, "); returning the original")
                   : absl::StrCat(what, " could not be checked numerically (", check.reason,
                                  "); returning the original");
}

// Makes `report` describe the original coming back, for `why`.
void ReturnOriginal(OptimizeReport& report, std::string why) {
  report.returned_original = true;
  report.error = std::move(why);
  report.cost_after_ms = report.cost_before_ms;
  report.operators_after = report.operators_before;
}

}  // namespace

absl::StatusOr<GraphResult> OptimizeGraph(const Graph& input, const std::vector<RewriteRule>& rules,
                                          profiler::ProfilerClient& profiler, const OptimizerOptions& options) {
  auto result = SearchGraph(input, rules, profiler, options);
  if (!result.ok()) return result.status();
  result->report.check = CompareGraphs(input, result->graph, options.check);
  if (std::string why = CheckFailure(result->report.check, "the optimized graph"); !why.empty()) {
    ReturnOriginal(result->report, std::move(why));
    result->graph = input;
  }
  return result;
}

absl::StatusOr<OptimizeResult> OptimizeOnnx(const std::string& model_bytes, const std::vector<RewriteRule>& rules,
                                            profiler::ProfilerClient& profiler, const OptimizerOptions& options) {
  return OptimizeOnnx(model_bytes, rules, profiler, options, ExportOnnx);
}

absl::StatusOr<OptimizeResult> OptimizeOnnx(const std::string& model_bytes, const std::vector<RewriteRule>& rules,
                                            profiler::ProfilerClient& profiler, const OptimizerOptions& options,
                                            const OnnxExporter& export_onnx) {
  const absl::Time start = absl::Now();
  auto model = ImportOnnx(model_bytes, options.import);
  if (!model.ok()) return model.status();
  auto optimized = SearchGraph(model->graph, rules, profiler, options);
  if (!optimized.ok()) return optimized.status();
  OptimizeResult result;
  OptimizeReport& report = result.report;
  report = std::move(optimized->report);
  report.opaque_operators = model->opaque_ops_seen;
  report.import_notes = model->import_notes;
  // The check compares what the user gets, the bytes read back as anyone
  // would read them, with what the user gave: export bugs fail it too.
  auto exported = export_onnx(*model, optimized->graph);
  OnnxImportOptions reimport = options.import;
  reimport.max_model_bytes = std::numeric_limits<int64_t>::max();  // folded constants may make ours larger
  if (!exported.ok()) {
    ReturnOriginal(report, absl::StrCat("exporting the optimized graph failed (", exported.status().message(),
                                        "); returning the original"));
  } else if (auto back = ImportOnnx(*exported, reimport); !back.ok()) {
    ReturnOriginal(report, absl::StrCat("the exported model does not import (", back.status().message(),
                                        "); returning the original"));
  } else {
    report.check = CompareGraphs(model->graph, back->graph, options.check);
    if (std::string why = CheckFailure(report.check, "the exported model"); !why.empty()) {
      ReturnOriginal(report, std::move(why));
    } else {
      result.model = std::move(*exported);
    }
  }
  if (report.returned_original) result.model = model_bytes;  // byte for byte what came in
  report.total_time = absl::Now() - start;
  return result;
}

}  // namespace taso::optimizer
