#include "optimizer/optimize.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "core/canonical.h"
#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "core/scratch_dir.h"
#include "core/version.h"
#include "net/digest.h"
#include "onnx_io/onnx_export.h"
#include "optimizer/passes/cost_model.h"
#include "optimizer/passes/cse.h"
#include "optimizer/passes/epilogue_fusion.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/passes/passes.h"
#include "optimizer/rewrite/reachable_rules.h"
#include "optimizer/passes/runtime_baseline.h"
#include "optimizer/passes/structural_rules.h"

namespace taso::optimizer {
namespace {

// The graph inputs as optimized, "name=1x3x224x224" each (--input-shape's
// form): the shapes the costs were measured for.
std::vector<std::string> InputShapes(const Graph& graph) {
  std::vector<std::string> shapes;
  for (const Node& node : graph.nodes()) {
    if (node.kind != OpKind::kInput || node.output_types.empty()) continue;
    shapes.push_back(FormatInputShape(node.name, node.output_types[0].dims));
  }
  return shapes;
}

// The search's result and the runtime baseline it was costed against, which
// the never-slower step then times it against.
struct SearchOutcome {
  GraphResult result;
  Graph baseline;
};

// The proved rewrites and the structural ones for `start`, only those that
// could ever match it: the search copies what it is given, and a size-4
// rule set is 185,000 rewrites.
std::vector<RewriteRule> RewritesFor(const Graph& start, const std::vector<RewriteRule>& rules,
                                     const OptimizerOptions& options, OptimizeReport& report) {
  std::vector<RewriteRule> structural;
  if (options.structural_rules) structural = StructuralRewrites(start);
  std::vector<const RewriteRule*> given;
  given.reserve(rules.size() + structural.size());
  for (const RewriteRule& r : rules) given.push_back(&r);
  for (const RewriteRule& r : structural) given.push_back(&r);
  std::vector<RewriteRule> all;
  const std::vector<int> reachable = ReachableRewrites(start, given);
  all.reserve(reachable.size());
  for (int i : reachable) {
    if (i < static_cast<int>(rules.size())) {
      all.push_back(rules[i]);
    } else {
      all.push_back(std::move(structural[i - rules.size()]));
    }
  }
  report.rules_available = static_cast<int>(all.size());
  report.rules_unreachable = static_cast<int>(given.size() - all.size());
  return all;
}

// Tensat's search: saturation, then extraction; its figures into `report`.
absl::StatusOr<Graph> RunEqsat(const Graph& start, const std::vector<RewriteRule>& rules, CostModel& cost,
                               const OptimizerOptions& options, OptimizeReport& report) {
  EqsatOptions eq = options.eqsat;
  static_cast<SearchControl&>(eq) = options;
  // One budget for exploration, costing and extraction: the ILP gets what
  // is left of it (EqsatOptions::time_limit).
  eq.ilp_time_limit = options.time_limit;
  auto r = EqsatSearch(start, rules, cost, eq);
  if (!r.ok()) return r.status();
  report.search = "eqsat";
  int applications = 0;
  for (const auto& [rule, count] : r->report.rules_applied) applications += count;
  report.stop_reason = r->report.stop_reason;
  report.stop_detail = absl::StrCat(r->report.stop_detail, " (", r->iterations, " iterations, ", r->enodes,
                                    " e-nodes, ", r->eclasses, " e-classes, ", applications,
                                    " rule applications",
                                    r->report.rule_bans > 0 ? absl::StrCat(", ", r->report.rule_bans, " rule bans") : "",
                                    "); extraction: ", r->report.extraction_detail);
  report.enodes = r->enodes;
  report.eclasses = r->eclasses;
  report.extraction = r->report.extraction;
  report.extraction_detail = r->report.extraction_detail;
  // The rules the result is made with, not every application in the e-graph.
  report.rules_applied = r->rules_used;
  report.rule_bans = r->report.rule_bans;
  report.ilp = r->report.ilp;
  report.ilp_incumbent_ms = r->report.ilp_incumbent_ms;
  report.ilp_bound_ms = r->report.ilp_bound_ms;
  report.ilp_gap = r->report.ilp_gap;
  report.extraction_cost_ms = r->report.extraction_cost_ms;
  report.ilp_time_limit = r->report.ilp_time_limit;
  report.exploration_time = r->report.exploration_time;
  report.costing_time = r->report.costing_time;
  report.extraction_time = r->report.extraction_time;
  return std::move(r->best);
}

// TASO's search: cost-directed backtracking; its figures into `report`.
absl::StatusOr<Graph> RunBacktrack(const Graph& start, const std::vector<RewriteRule>& rules, CostModel& cost,
                                   const OptimizerOptions& options, OptimizeReport& report) {
  BacktrackOptions bt = options.backtrack;
  static_cast<SearchControl&>(bt) = options;
  auto r = BacktrackSearch(start, rules, cost, bt);
  if (!r.ok()) return r.status();
  report.search = "backtrack";
  report.stop_reason = r->report.stop_reason;
  report.stop_detail = r->report.stop_detail;
  report.rules_applied = r->report.rules_applied;
  return std::move(r->best);
}

// The search alone; callers check its result against what they started from.
absl::StatusOr<SearchOutcome> SearchGraph(const Graph& input, const std::vector<RewriteRule>& rules,
                                          profiler::ProfilerClient& profiler, const OptimizerOptions& options) {
  SearchOutcome outcome;
  GraphResult& result = outcome.result;
  OptimizeReport& report = result.report;
  auto bn = FoldBatchNorm(input);
  if (!bn.ok()) return bn.status();
  report.batchnorms_folded = bn->changed;
  auto cse = EliminateCommonSubexpressions(bn->graph);
  if (!cse.ok()) return cse.status();
  report.cse_merged = cse->changed;
  const Graph& start = cse->graph;
  report.operators_before = input.num_ops();

  const std::vector<RewriteRule> all = RewritesFor(start, rules, options, report);
  CostModel cost(&profiler, options.backend, options.threads);
  EnterPhase(options.progress, OptimizePhase::kBaseline);
  auto baseline = RuntimeBaseline(input, cost);
  if (!baseline.ok()) return baseline.status();
  const absl::Time search_start = absl::Now();
  EnterPhase(options.progress, OptimizePhase::kSearch);
  auto searched = options.search == SearchKind::kEqsat ? RunEqsat(start, all, cost, options, report)
                                                        : RunBacktrack(start, all, cost, options, report);
  if (!searched.ok()) return searched.status();
  Graph best = *std::move(searched);
  report.search_time = absl::Now() - search_start;
  if (options.structural_rules) {
    auto fused = FuseEpilogues(best, cost);
    if (!fused.ok()) return fused.status();
    report.epilogues_fused = fused->changed;
    best = std::move(fused->graph);
  }
  auto pairs = RemoveTransposePairs(best);
  if (!pairs.ok()) return pairs.status();
  report.transpose_pairs_removed = pairs->changed;
  best = std::move(pairs->graph);
  // One split where a merge left a chain of them (a runtime copies each).
  auto flat = FlattenSplits(best);
  if (!flat.ok()) return flat.status();
  best = std::move(flat->graph);
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
  report.cost_after_ms = report.candidate_cost_ms = *after;
  if (report.cost_after_ms > report.cost_baseline_ms) {
    // What the runtime would run anyway is cheaper: return that, never a
    // graph the cost model itself says is slower.
    result.graph = baseline->graph;
    report.cost_after_ms = report.cost_baseline_ms;
    report.stop_detail += "; the search's result cost more than the runtime baseline, which is returned";
  }
  report.cost_model = cost.Describe();
  report.costs_are_estimates = cost.any_estimate();
  report.unmeasured_operators = cost.unmeasured_signatures();
  report.cost_device = cost.device();
  report.cost_backend = cost.answered_backend();
  report.threads = cost.answered_threads();
  report.cost_backend_choice = cost.backend_choice();
  report.input_shapes = InputShapes(input);
  report.dialect = options.dialect;
  report.operators_after = result.graph.num_ops();
  outcome.baseline = std::move(baseline->graph);
  return outcome;
}

// Why `what` must not be returned after `check`, or "" when it may.
// Unchecked is treated as wrong: the contract is a verified model or the input.
// How an optimized model is read back for its check: as the input was, but
// without the size limit (folded constants may make it larger than the input).
OnnxImportOptions OptimizedModelImport(const OnnxImportOptions& input) {
  OnnxImportOptions reimport = input;
  reimport.max_model_bytes = std::numeric_limits<int64_t>::max();
  return reimport;
}

std::string CheckFailure(const NumericCheck& check, const std::string& what) {
  if (check.ran && check.equal) return "";
  return check.ran ? absl::StrCat(what, " differs from the original (", check.reason, "); returning the original")
                   : absl::StrCat(what, " could not be checked numerically (", check.reason,
                                  "); returning the original");
}

// The input comes back: the user's runtime runs it as the runtime baseline,
// so that is its cost after (speedup 1 against the baseline, not below it).
void CostTheInputReturned(OptimizeReport& report) {
  report.cost_after_ms = report.cost_baseline_ms > 0 ? report.cost_baseline_ms : report.cost_before_ms;
  report.operators_after = report.operators_before;
}

// Makes `report` describe the input coming back byte for byte, unmeasured,
// for `why` (Report.output_is_input): nothing worth a comparison was found.
void InputReturnedUnmeasured(MeasureVerdict why, std::string detail, OptimizeReport& report) {
  report.output_is_input = true;
  report.measurement = why;
  report.measurement_detail = std::move(detail);
  report.operators_after = report.operators_before;
}

// Whether the search's result is predicted faster than the runtime baseline
// by less than `min_gain` (a fraction); never for costs that are not positive.
bool PredictedGainBelow(const OptimizeReport& report, double min_gain) {
  if (!(min_gain > 0) || !(report.cost_after_ms > 0) || !(report.cost_baseline_ms > 0)) return false;
  return report.cost_baseline_ms < report.cost_after_ms * (1 + min_gain);
}

// Whether the search's `candidate` is the runtime baseline's own graph: it
// found nothing a runtime does not do itself.
bool IsBaselineGraph(const Graph& baseline, const Graph& candidate) {
  auto baseline_hash = StructuralHash(baseline), candidate_hash = StructuralHash(candidate);
  return baseline_hash.ok() && candidate_hash.ok() && *baseline_hash == *candidate_hash;
}

// The files a user would run, for a backend that times ONNX models itself.
struct ModelFiles {
  const std::string* input = nullptr;   // as the user gave it
  const std::string* output = nullptr;  // the candidate as exported
  // With external data (the input had it): where each one's tensors are
  // read from. The files are then written to disk, data beside them, and
  // sent by path: such a model may be larger than one message holds.
  const ExternalData* input_data = nullptr;
  const ExternalData* output_data = nullptr;
};

// The files' bytes in `request`, or, with external data, the files written
// to `scratch` and their paths.
absl::Status AddModelFiles(const ModelFiles& files, std::optional<ScratchDir>& scratch,
                           profiler::MeasureGraphRequest& request) {
  if (files.input_data == nullptr || files.output_data == nullptr) {
    request.add_onnx_models(*files.input);
    request.add_onnx_models(*files.output);
    return absl::OkStatus();
  }
  auto dir = ScratchDir::Make("measure");
  if (!dir.ok()) return dir.status();
  scratch.emplace(*std::move(dir));
  for (const auto& [name, bytes, data] : {std::tuple{"input.onnx", files.input, files.input_data},
                                          std::tuple{"output.onnx", files.output, files.output_data}}) {
    const std::string path = scratch->File(name);
    if (absl::Status s = WriteOnnxFiles(path, *bytes, *data, /*external=*/true); !s.ok()) return s;
    request.add_onnx_model_paths(path);
  }
  return absl::OkStatus();
}

// The backend the never-slower step measures on (OptimizerOptions::measure_backend).
struct MeasureChoice {
  profiler::Backend backend;
  // Chosen, not asked for: when it is missing, this one stands in.
  profiler::Backend fallback = profiler::BACKEND_UNSPECIFIED;
};
MeasureChoice ChooseMeasureBackend(const OptimizerOptions& options, const OptimizeReport& report) {
  if (options.measure_backend != profiler::BACKEND_UNSPECIFIED) return {options.measure_backend};
  const profiler::Backend costed =
      report.cost_backend != profiler::BACKEND_UNSPECIFIED ? report.cost_backend : options.backend;
  if (costed == profiler::BACKEND_CPU) return {profiler::BACKEND_ORT_CPU, profiler::BACKEND_CPU};
  // The backend asked for, else the one that answered rather than "auto"
  // again: an auto choice of ort must time the files, which only a request
  // naming ort does.
  return {options.backend != profiler::BACKEND_UNSPECIFIED ? options.backend : costed};
}

// An ort backend that is not there (no node or onnxruntime-node, or a
// profiler without it), rather than a model it could not run.
bool BackendMissing(const absl::Status& s) {
  return s.code() == absl::StatusCode::kFailedPrecondition || s.code() == absl::StatusCode::kUnimplemented ||
         s.code() == absl::StatusCode::kUnavailable;
}

// Baseline over candidate: the geometric mean of the per-pass ratios where
// both were timed in the same passes (alternating creation orders, so
// the mean cancels the order's bias), else the ratio of the medians.
double MeasuredSpeedup(const profiler::GraphMeasurement& baseline, const profiler::GraphMeasurement& candidate) {
  const int passes = baseline.pass_median_ms_size();
  if (passes > 0 && passes == candidate.pass_median_ms_size()) {
    double log_sum = 0;
    bool usable = true;
    for (int p = 0; p < passes; ++p) {
      usable = usable && baseline.pass_median_ms(p) > 0 && candidate.pass_median_ms(p) > 0;
      if (usable) log_sum += std::log(baseline.pass_median_ms(p) / candidate.pass_median_ms(p));
    }
    if (usable) return std::exp(log_sum / passes);
  }
  return candidate.median_ms() > 0 ? baseline.median_ms() / candidate.median_ms() : 1.0;
}

// "1.650 vs 1.720 ms, then 2.170 vs 2.210 ms, ..." (candidate vs baseline,
// pass by pass) when the speedup came from passes, else the medians: the figures
// the speedup was computed from, so that a report's numbers agree with its
// ratio (medians over all passes can point the other way when one pass
// ran slower throughout).
std::string DescribeTimes(const profiler::GraphMeasurement& baseline, const profiler::GraphMeasurement& candidate) {
  const int passes = baseline.pass_median_ms_size();
  if (passes > 1 && passes == candidate.pass_median_ms_size()) {
    std::string text;
    for (int p = 0; p < passes; ++p) {
      absl::StrAppend(&text, p == 0 ? "" : ", then ",
                      absl::StrFormat("%.3f vs %.3f ms", candidate.pass_median_ms(p), baseline.pass_median_ms(p)));
    }
    return absl::StrCat(text, " in ", passes, " passes of alternating order");
  }
  return absl::StrFormat("%.3f ms vs %.3f ms", candidate.median_ms(), baseline.median_ms());
}

// What ONNX Runtime did with the files: timed them (and compared their
// outputs), or why not.
struct FilesTimed {
  std::optional<profiler::MeasureGraphResponse> response;
  // A profiler that does not take models (or not these): the IR graphs are timed instead.
  absl::Status refused;
  // Any other failure: the measurement fails, unless a fallback backend stands in.
  absl::Status failed;
};

// Under the ort backend the never-slower step times the input file against
// the candidate's exported file as ORT reads them: ORT runs a re-exported IR
// graph differently from the file it is given, and the user runs the file.
// It compares their outputs on the check's seed in the same call: ORT reads
// the files with its own importer, so it sees what our re-import cannot
// (runtime_check.h). No response when the files cannot be timed (another
// backend, or a profiler that does not take models).
FilesTimed MeasureModelFiles(const ModelFiles& files, profiler::ProfilerClient& profiler, profiler::Backend backend,
                             int threads, uint64_t seed) {
  FilesTimed timed;
  if (backend != profiler::BACKEND_ORT_CPU || files.input == nullptr || files.output == nullptr) return timed;
  profiler::MeasureGraphRequest request;
  std::optional<ScratchDir> scratch;  // removed when measured
  if (absl::Status s = AddModelFiles(files, scratch, request); !s.ok()) {
    timed.failed = s;
    return timed;
  }
  request.set_backend(profiler::BACKEND_ORT_CPU);
  request.set_threads(threads);
  // Twice a graph comparison's runs: ORT's run-to-run spread on small models
  // is of the order of the 1 % margin.
  request.set_min_runs(40);
  request.set_compare_outputs(true);
  request.set_compare_seed(seed);
  auto response = profiler.MeasureGraph(request);
  if (response.ok()) {
    timed.response = std::move(*response);
    return timed;
  }
  const absl::StatusCode code = response.status().code();
  if (code != absl::StatusCode::kUnimplemented && code != absl::StatusCode::kResourceExhausted &&
      code != absl::StatusCode::kInvalidArgument) {
    timed.failed = response.status();
  } else {
    timed.refused = response.status();
  }
  return timed;
}

// "cpu", "ort_cpu": a backend as the report's text names it.
std::string BackendText(profiler::Backend backend) {
  return absl::AsciiStrToLower(absl::StripPrefix(profiler::Backend_Name(backend), "BACKEND_"));
}

// ONNX Runtime's comparison of the files (from `timed`) into
// report.runtime_check, or why there is none: a check that did not run is
// said, never left out. `asked` is the backend the step chose first.
void RecordRuntimeCheck(const ModelFiles& files, const FilesTimed& timed, profiler::Backend asked, double tolerance,
                        OptimizeReport& report) {
  using V = RuntimeCheckVerdict;
  RuntimeCheck& check = report.runtime_check;
  if (timed.response) {
    check = timed.response->comparisons_size() > 0
                ? JudgeRuntimeComparison(timed.response->comparisons(0), tolerance)
                : RuntimeCheckNotRun(V::kSkippedUnavailable,
                                     "the profiler timed the files in ONNX Runtime but did not compare their outputs "
                                     "(a taso_profiler from before the comparison?)");
  } else if (files.input == nullptr || files.output == nullptr) {
    check = RuntimeCheckNotRun(V::kSkipped, "no ONNX files (an IR graph was optimized)");
  } else if (asked != profiler::BACKEND_ORT_CPU) {
    // Unspecified: the backend the costs came from.
    const profiler::Backend named = asked != profiler::BACKEND_UNSPECIFIED ? asked : report.cost_backend;
    check = RuntimeCheckNotRun(
        V::kSkipped, absl::StrCat("the never-slower step measures on the ", BackendText(named),
                                  " backend, not in ONNX Runtime, so the files were not run there "
                                  "(--measure-backend ort runs them)"));
  } else {
    const absl::Status& why = timed.refused.ok() ? timed.failed : timed.refused;
    check = RuntimeCheckNotRun(BackendMissing(why) ? V::kSkippedUnavailable : V::kFailed,
                               absl::StrCat("ONNX Runtime did not run the files (", why.message(), ")"));
  }
}

// The timing's verdict on the measured pair: true keeps the candidate. `how`
// says what was timed where, for the detail.
bool KeepCandidateMeasured(const Graph& baseline, const Graph& candidate, const profiler::GraphMeasurement& b,
                           const profiler::GraphMeasurement& c, const std::string& how,
                           const OptimizerOptions& options, OptimizeReport& report) {
  const double ratio = MeasuredSpeedup(b, c);
  report.measured_speedup = ratio;
  // A candidate that is the baseline's own graph (the search found nothing
  // a runtime does not do anyway) is here only because export_baseline asked
  // for its re-export: it is returned, and what separates the two timings is
  // the re-export's form and noise, which is for the record, not a verdict.
  if (IsBaselineGraph(baseline, candidate)) {
    report.measurement = MeasureVerdict::kKeptReexport;
    report.measurement_detail = absl::StrFormat(
        "returned the re-export (--export-baseline): it is the baseline's own graph, with nothing the search found, "
        "so %.3fx (candidate vs baseline %s) is the re-export's form and noise, not a rewrite's (%s)",
        ratio, DescribeTimes(b, c), how);
    return true;
  }
  // With a minimum gain, the measurement must show it as the prediction
  // did: a candidate measured within noise of the baseline gains its user
  // nothing but risk (NAS-RNN's merged cell measured 1.011x in this step and
  // 0.955x in the suite's timing of the same files, A/A 0.991x). Without
  // one, it only has to be no more than the tolerance slower.
  const bool gain_required = options.min_gain > 0;
  if (gain_required ? ratio >= 1 + options.min_gain : ratio * (1 + options.measure_tolerance) >= 1) {
    report.measurement = MeasureVerdict::kKeptCandidate;
    report.measurement_detail =
        absl::StrFormat("kept the candidate: %.3fx, candidate vs baseline %s (%s)", ratio, DescribeTimes(b, c), how);
    return true;
  }
  report.measurement = MeasureVerdict::kKeptBaseline;
  const std::string verdict =
      ratio >= 1 ? "the candidate measured faster by less than the minimum gain"
                 : absl::StrFormat("the candidate measured %.1f%% slower than the baseline", 100 * (1 / ratio - 1));
  const std::string gate = gain_required ? absl::StrFormat("--min-gain %.2f%%", 100 * options.min_gain)
                                         : absl::StrFormat("tolerance %.1f%%", 100 * options.measure_tolerance);
  report.measurement_detail = absl::StrFormat(
      "returned the input: %s (%.4fx; %s; candidate vs baseline %s; predicted %.3f ms vs %.3f ms; %s)", verdict,
      ratio, gate, DescribeTimes(b, c), report.cost_after_ms, report.cost_baseline_ms, how);
  CostTheInputReturned(report);
  return false;
}

// Never slower: times `baseline` (the input's runtime baseline) and
// `candidate` end to end in one interleaved MeasureGraph call (or, under the
// ort backend, the input and output files, comparing their outputs too) and
// records the outcome in `report`. False when the input must be returned
// instead of the candidate (measured slower beyond the tolerance, or ONNX
// Runtime's outputs differ: report.runtime_check); true otherwise, including
// when no measurement could be made (the candidate is checked and predicted
// faster).
bool KeepCandidateAfterMeasuring(const Graph& baseline, const Graph& candidate, const ModelFiles& files,
                                 profiler::ProfilerClient& profiler, const OptimizerOptions& options,
                                 OptimizeReport& report) {
  if (!options.measure) {
    report.measurement = MeasureVerdict::kSkippedDisabled;
    report.measurement_detail = "not measured: disabled (--no-measure)";
    report.runtime_check = RuntimeCheckNotRun(
        RuntimeCheckVerdict::kSkipped, "the never-slower step, which runs the files in ONNX Runtime, is disabled");
    return true;
  }
  auto fail = [&](const std::string& why) {
    report.measurement = MeasureVerdict::kFailed;
    report.measurement_detail = absl::StrCat("measurement failed (", why, "); returning the checked candidate");
    return true;
  };
  EnterPhase(options.progress, OptimizePhase::kMeasure);
  MeasureChoice choice = ChooseMeasureBackend(options, report);
  std::string fallback_note;  // why the chosen backend was not the one measured on
  FilesTimed timed = MeasureModelFiles(files, profiler, choice.backend, options.threads, report.check.seed);
  RecordRuntimeCheck(files, timed, choice.backend, options.check.tolerance, report);
  if (report.runtime_check.verdict == RuntimeCheckVerdict::kDifferent) {
    // Wrong in the runtime the user runs: how fast it is does not matter.
    report.measurement = MeasureVerdict::kOutputsDiffer;
    report.measurement_detail = "returned the input: ONNX Runtime computes different outputs for the output file";
    return false;
  }
  const bool files_timed = timed.response.has_value();
  absl::Status files_failed = timed.failed;
  auto fall_back = [&](const absl::Status& why) {
    fallback_note = absl::StrCat("ONNX Runtime could not be run (", why.message(),
                                 "), so the cpu backend's graph runner decided");
    choice.backend = choice.fallback;
    choice.fallback = profiler::BACKEND_UNSPECIFIED;
  };
  if (!files_failed.ok() && choice.fallback != profiler::BACKEND_UNSPECIFIED && BackendMissing(files_failed)) {
    fall_back(files_failed);
    files_failed = absl::OkStatus();
  }
  if (!files_failed.ok()) return fail(std::string(files_failed.message()));
  profiler::MeasureGraphRequest request;
  *request.add_graphs() = GraphToProto(baseline, /*weight_data=*/false);
  *request.add_graphs() = GraphToProto(candidate, /*weight_data=*/false);
  request.set_backend(choice.backend);
  request.set_threads(options.threads);
  // Views run as copies, as the runtime users run (ONNX Runtime) runs its
  // Splits and Transposes: a candidate that adds views must not pass on
  // aliases the runtime does not have.
  request.set_views(profiler::GRAPH_VIEW_POLICY_MATERIALIZE);
  // More runs than a lone graph gets: the decision rests on a 1 % margin.
  request.set_min_runs(20);
  auto response = files_timed ? absl::StatusOr<profiler::MeasureGraphResponse>(std::move(*timed.response))
                              : profiler.MeasureGraph(request);
  if (!response.ok() && choice.fallback != profiler::BACKEND_UNSPECIFIED && BackendMissing(response.status())) {
    fall_back(response.status());
    request.set_backend(choice.backend);
    response = profiler.MeasureGraph(request);
  }
  if (!response.ok()) {
    const absl::StatusCode code = response.status().code();
    if (code == absl::StatusCode::kUnimplemented || code == absl::StatusCode::kFailedPrecondition) {
      report.measurement = MeasureVerdict::kSkippedBackendCannotRun;
      report.measurement_detail = absl::StrCat("not measured: ", response.status().message());
      return true;
    }
    return fail(std::string(response.status().message()));
  }
  if (response->results_size() != 2) return fail(absl::StrCat(response->results_size(), " results for 2 graphs"));
  for (int i = 0; i < 2; ++i) {
    if (!response->results(i).has_measurement()) {
      return fail(absl::StrCat(i == 0 ? "baseline" : "candidate", ": ", response->results(i).error().message()));
    }
  }
  const profiler::GraphMeasurement& b = response->results(0).measurement();
  const profiler::GraphMeasurement& c = response->results(1).measurement();
  report.measured_baseline_ms = b.median_ms();
  report.measured_after_ms = c.median_ms();
  report.measured_runs = std::min(b.runs(), c.runs());
  report.measured_backend = c.backend();
  // Not "interleaved": above one thread the ort backend times each file with
  // its session alone, which the device's timing name says.
  const std::string how = absl::StrFormat(
      "%s, %d runs each on %s%s%s",
      files_timed ? "the input and output files as the runtime reads them" : "the baseline and candidate graphs",
      report.measured_runs, c.device(),
      c.opaque_skipped() > 0 ? absl::StrCat("; ", c.opaque_skipped(), " opaque operators not run, in neither time")
                             : "",
      fallback_note.empty() ? "" : absl::StrCat("; ", fallback_note));
  return KeepCandidateMeasured(baseline, candidate, b, c, how, options, report);
}

// Makes `report` describe the original coming back, for `why`.
void ReturnOriginal(OptimizeReport& report, std::string why) {
  report.returned_original = true;
  report.error = std::move(why);
  CostTheInputReturned(report);
}

}  // namespace

absl::StatusOr<GraphResult> OptimizeGraph(const Graph& input, const std::vector<RewriteRule>& rules,
                                          profiler::ProfilerClient& profiler, const OptimizerOptions& options) {
  auto searched = SearchGraph(input, rules, profiler, options);
  if (!searched.ok()) return searched.status();
  GraphResult* result = &searched->result;
  result->report.check = CompareGraphs(input, result->graph, options.check);
  if (std::string why = CheckFailure(result->report.check, "the optimized graph"); !why.empty()) {
    ReturnOriginal(result->report, std::move(why));
    result->graph = input;
  } else if (!KeepCandidateAfterMeasuring(searched->baseline, result->graph, ModelFiles{}, profiler, options,
                                          result->report)) {
    result->graph = input;
  }
  return std::move(*result);
}

namespace {

// "LHS => RHS" for each applied rewrite that is a proved rule (a structural
// rewrite's name already says what it does).
std::map<std::string, std::string> ReadableRewrites(const std::vector<RewriteRule>& rules,
                                                    const std::map<std::string, int>& applied) {
  std::map<std::string, std::string> readable;
  for (const RewriteRule& rule : rules) {
    if (applied.count(rule.name) == 0) continue;
    rules::Rule as_written;
    *as_written.mutable_source() = GraphToProto(rule.lhs(), /*weight_data=*/false);
    *as_written.mutable_target() = GraphToProto(rule.rhs(), /*weight_data=*/false);
    auto text = RuleToSexpr(as_written);
    if (!text.ok()) continue;  // the id alone, then
    readable[rule.name] = absl::StrReplaceAll(*text, {{")=>(", ") => ("}});
  }
  return readable;
}

std::map<std::string, std::pair<int, int>> OperatorsBeforeAndAfter(const std::string& before,
                                                                   const std::string& after) {
  std::map<std::string, std::pair<int, int>> counts;
  auto in = CountOnnxOperators(before);
  // The input returned byte for byte (the common case) is not parsed twice.
  auto out = after == before ? in : CountOnnxOperators(after);
  if (!in.ok() || !out.ok()) return counts;
  for (const auto& [type, n] : *in) counts[type].first = n;
  for (const auto& [type, n] : *out) counts[type].second = n;
  return counts;
}

}  // namespace

std::string RuleSetDigest(const std::vector<RewriteRule>& rules) {
  // A rule and its backward direction ("ID~") are one rule of the set.
  std::set<std::string> ids;
  for (const RewriteRule& r : rules) ids.insert(std::string(absl::StripSuffix(r.name, "~")));
  std::string text;
  for (const std::string& id : ids) absl::StrAppend(&text, id, "\n");
  return net::Sha256Hex(text);
}

absl::StatusOr<OptimizeResult> OptimizeOnnx(const std::string& model_bytes, const std::vector<RewriteRule>& rules,
                                            profiler::ProfilerClient& profiler, const OptimizerOptions& options) {
  return OptimizeOnnx(model_bytes, rules, profiler, options,
                      [dialect = options.dialect](const OnnxModel& model, const Graph& graph, OnnxExternalSink* sink) {
                        return ExportOnnx(model, graph, sink, dialect);
                      });
}

absl::StatusOr<OptimizeResult> OptimizeOnnx(const std::string& model_bytes, const std::vector<RewriteRule>& rules,
                                            profiler::ProfilerClient& profiler, const OptimizerOptions& options,
                                            const OnnxExporter& export_onnx) {
  const absl::Time start = absl::Now();
  EnterPhase(options.progress, OptimizePhase::kImport);
  auto model = ImportOnnx(model_bytes, options.import);
  if (!model.ok()) return model.status();
  // A result that cannot be checked is never returned, so a model too large
  // to check is refused before costing or measuring allocates its tensors.
  if (const int64_t bytes = CheckBytes(model->graph); bytes > options.check.max_bytes) {
    // InvalidArgument, as for a file above --max_model_mb: the same model
    // will not fit on a retry.
    return absl::InvalidArgumentError(absl::StrCat(
        "the model's tensors take ", bytes >> 20, " MiB at its declared shapes, above the limit of ",
        options.check.max_bytes >> 20, " MiB for checking a result (--max_check_mb); nothing was optimized"));
  }
  // Likewise its arithmetic: a batch-8 ResNeXt-50 is about 69 GFLOP a run,
  // minutes in the check's interpreter, and was searched only to come back.
  if (const int64_t flops = CheckFlops(model->graph); flops > options.check.max_flops) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model takes about ", absl::StrFormat("%.1f", flops / 1e9), " GFLOP a run at its declared shapes, above the limit of ",
        absl::StrFormat("%g", options.check.max_flops / 1e9),
        " GFLOP for checking a result in the interpreter (--max_check_gflop; the check runs both models ",
        options.check.seeds, " times); nothing was optimized"));
  }
  auto searched = SearchGraph(model->graph, rules, profiler, options);
  if (!searched.ok()) return searched.status();
  if (options.cancelled && options.cancelled()) {
    return absl::CancelledError("cancelled (the caller went away or the server is shutting down); the search stopped");
  }
  GraphResult* optimized = &searched->result;
  OptimizeResult result;
  OptimizeReport& report = result.report;
  report = std::move(optimized->report);
  report.opaque_operators = model->opaque_ops_seen;
  report.import_notes = model->import_notes;
  // The check compares what the user gets, the bytes read back as anyone
  // would read them, with what the user gave: export bugs fail it too.
  EnterPhase(options.progress, OptimizePhase::kCheck);
  // An input with external data is exported the same way: it may be larger
  // than the 2 GiB one message holds.
  const bool external = model->external_data_bytes > 0;
  std::optional<OnnxExternalSink> sink;
  if (external) sink = OnnxExternalSink{"taso-optimized.onnx.data"};
  auto exported = export_onnx(*model, optimized->graph, sink ? &*sink : nullptr);
  ExternalData exported_data;
  if (sink) exported_data.AddFile(sink->location, std::make_shared<const std::string>(std::move(sink->data)));
  OnnxImportOptions reimport = OptimizedModelImport(options.import);
  reimport.external_data = exported_data;
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
    } else if (!options.export_baseline && IsBaselineGraph(searched->baseline, optimized->graph)) {
      result.model = model_bytes;  // what the runtime would run anyway, without a re-export's reordering
      InputReturnedUnmeasured(
          MeasureVerdict::kSkippedInputReturned,
          "not measured: the search found nothing beyond what a runtime does itself (folding constants and batch "
          "norms, fusing bias and activations, merging duplicates), so the input is returned byte for byte",
          report);
    } else if (!options.export_baseline && PredictedGainBelow(report, options.min_gain)) {
      result.model = model_bytes;
      InputReturnedUnmeasured(
          MeasureVerdict::kSkippedBelowMinGain,
          absl::StrFormat("not measured: the result is predicted %.2f%% faster than the runtime baseline (%.3f ms vs "
                          "%.3f ms), less than the minimum gain of %.2f%% (--min-gain), so the input is returned "
                          "byte for byte",
                          100 * (report.cost_baseline_ms / report.cost_after_ms - 1), report.cost_after_ms,
                          report.cost_baseline_ms, 100 * options.min_gain),
          report);
      CostTheInputReturned(report);
    } else if (KeepCandidateAfterMeasuring(searched->baseline, optimized->graph,
                                           ModelFiles{&model_bytes, &*exported,
                                                      external ? &options.import.external_data : nullptr,
                                                      external ? &exported_data : nullptr},
                                           profiler, options, report)) {
      result.model = std::move(*exported);
      result.model_data = exported_data;
      result.graph = std::move(optimized->graph);
    } else if (report.runtime_check.verdict == RuntimeCheckVerdict::kDifferent) {
      // As a failed check of our own: the user's runtime computes something else.
      ReturnOriginal(report, absl::StrCat(report.runtime_check.reason, "; returning the original"));
    } else {
      result.model = model_bytes;  // the baseline was faster: what came in, byte for byte
    }
  }
  if (report.runtime_check.reason.empty()) {
    report.runtime_check = RuntimeCheckNotRun(
        RuntimeCheckVerdict::kNotReached, report.returned_original
                                              ? "the result failed before ONNX Runtime could run it"
                                              : "the input is returned byte for byte, so there is nothing to compare");
  }
  if (report.returned_original) result.model = model_bytes;  // byte for byte what came in
  if (result.model == model_bytes) {  // the input came back
    result.graph = model->graph;
    result.model_data = options.import.external_data;
  }
  result.input_origins = OnnxNodeLabels(*model);
  result.input_graph = std::move(model->graph);
  report.taso_version = kVersion;
  report.rules = options.rules_provenance;
  report.rules_digest = options.rules_provenance.digest.empty() ? RuleSetDigest(rules) : options.rules_provenance.digest;
  report.rule_rewrites = ReadableRewrites(rules, report.rules_applied);
  report.onnx_operators = OperatorsBeforeAndAfter(model_bytes, result.model);
  report.input_sha256 = net::Sha256Hex(model_bytes);
  report.output_sha256 = net::Sha256Hex(result.model);
  report.total_time = absl::Now() - start;
  return result;
}

NumericCheck CheckReturnedModel(const std::string& input, const std::string& returned,
                                const OptimizerOptions& options) {
  NumericCheck not_run;
  auto in = ImportOnnx(input, options.import);
  if (!in.ok()) {
    not_run.reason = absl::StrCat("the input does not import here: ", in.status().message());
    return not_run;
  }
  auto out = ImportOnnx(returned, OptimizedModelImport(options.import));
  if (!out.ok()) {
    not_run.reason = absl::StrCat("the returned model does not import here: ", out.status().message());
    return not_run;
  }
  return CompareGraphs(in->graph, out->graph, options.check);
}

}  // namespace taso::optimizer
