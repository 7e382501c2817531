// The optimizer's job end to end, as a library (taso_optimizer serves it,
// `taso optimize` embeds it): ONNX model in, search over verified rewrites,
// ONNX model out, checked numerically against the original. A model that fails
// the check is never returned: the original comes back with the reason.
#ifndef TASO_OPTIMIZER_OPTIMIZE_H_
#define TASO_OPTIMIZER_OPTIMIZE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/graph.h"
#include "onnx_io/onnx_export.h"
#include "onnx_io/onnx_external_data.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/backtrack/backtrack.h"
#include "optimizer/eqsat/eqsat.h"
#include "optimizer/passes/numeric_check.h"
#include "optimizer/search/progress.h"
#include "optimizer/search/search_control.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "optimizer/runtime_check.h"
#include "optimizer/search/search_report.h"
#include "costs/client.h"

namespace taso::optimizer {

enum class SearchKind { kBacktrack, kEqsat };

// Whether the returned graph was measured against the baseline end to end.
enum class MeasureVerdict {
  kUnspecified,              // not reached (e.g. the check failed first)
  kKeptCandidate,            // measured, and not slower than the baseline beyond the tolerance
  kKeptBaseline,             // measured slower, or faster by less than min_gain: the input is returned
  kSkippedDisabled,          // OptimizerOptions::measure false (--no-measure)
  kSkippedBackendCannotRun,  // the profiler's backend cannot run whole graphs (cuda, analytic)
  kFailed,                   // the measurement failed: the checked candidate is returned
  kSkippedInputReturned,     // the result is the baseline's own graph: the input is returned
  kSkippedBelowMinGain,      // predicted faster by less than min_gain: the input is returned
  // ONNX Runtime ran the files but their outputs differ (RuntimeCheck): the
  // input is returned as after a failed check (returned_original).
  kOutputsDiffer,
  // The result is the baseline's own graph, re-exported as export_baseline
  // asks: timed for the record, returned whatever the timing.
  kKeptReexport,
};

// SearchControl: the search's time limit (import, export and the check come
// on top); `cancelled`, polled inside both searches: once true the search
// stops and the call returns CANCELLED without the check or the measurement
// (the service sets it to "the caller went away", which a SIGTERM drain's end
// also causes); `progress`, told each phase as it starts and the search's
// state as it changes (for progress lines).
struct OptimizerOptions : SearchControl {
  SearchKind search = SearchKind::kBacktrack;
  BacktrackOptions backtrack;
  // Saturation's limits and rule scheduling; `time_limit` is the whole eqsat
  // search's (exploration, costing, extraction: EqsatOptions::time_limit).
  EqsatOptions eqsat;
  NumericCheckOptions check;
  profiler::Backend backend = profiler::BACKEND_UNSPECIFIED;
  // The threads the model will run with: operator costs are measured and the
  // never-slower step times at this count (0: the profiler's own count).
  int threads = 0;
  OnnxImportOptions import;
  // Structural rewrites (activation fusion) besides the rules given.
  bool structural_rules = true;
  // Never slower: before returning, run the candidate and the baseline (the
  // input after the passes every runtime applies) end to end, interleaved,
  // where the profiler's backend can, and return the input unless the
  // candidate is measured at least `min_gain` faster (with min_gain 0: unless
  // it is measured slower by more than `measure_tolerance`, a fraction).
  bool measure = true;
  double measure_tolerance = 0.01;
  // What the end-to-end measurement runs on. The ort backend times the
  // input and output files as ONNX Runtime reads them, so cpu (oneDNN) costs
  // can guide the search while the runtime users run decides what is
  // returned. Unspecified: ort when the costs came from the cpu backend (a
  // CPU user runs ONNX Runtime, and oneDNN and ORT's MLAS disagree on some
  // layouts: on the RNN cell a transposed-matmul form oneDNN ran 2.5x faster
  // ran 3x slower in ORT), falling back to cpu with a note when the profiler
  // has no ort backend; else the cost backend.
  profiler::Backend measure_backend = profiler::BACKEND_UNSPECIFIED;
  // When the search's result is the runtime baseline's own graph (it found
  // nothing a runtime does not do itself), OptimizeOnnx returns the input
  // byte for byte: a re-export only reorders and renames what the runtime
  // runs (ORT measured such a re-export 1.4 % slower on the RNN cell). Set
  // to get the baseline re-exported instead (folded constants and batch
  // norms, for a runtime without those passes).
  bool export_baseline = false;
  // Which operators the result may use (OptimizeOptions.target).
  OnnxDialect dialect = OnnxDialect::kStandard;
  // A result predicted faster than the runtime baseline by less than this
  // fraction comes back as the input, byte for byte, unmeasured: below ~1 %
  // a measurement cannot tell it from noise on these machines (ORT timed
  // such re-exports 0.93-1.01x, A/A 0.99-1.02x, bench/suite.sh), and a
  // rewritten model that gains nothing is only a risk to its user. Not with
  // export_baseline. 0 keeps any predicted gain. The never-slower
  // measurement asks the same gain of the measured speedup.
  double min_gain = 0.01;
  // Where the rules handed to OptimizeOnnx came from (rule_source.h), for
  // the report; its digest, when set, is the report's rules_digest.
  RuleProvenance rules_provenance;
};

struct OptimizeReport {
  double cost_before_ms = 0;   // the imported graph as written (= cost_raw_ms)
  double cost_after_ms = 0;    // what is returned
  double candidate_cost_ms = 0;  // the search's result, returned or not (Report.candidate_cost_ms)
  double cost_raw_ms = 0;      // the imported graph as written
  // The input after what a runtime does anyway (runtime_baseline.h): the
  // figure a speedup is honestly measured against.
  double cost_baseline_ms = 0;
  std::string cost_model;      // how operator times became these costs (CostModel::Describe)
  bool costs_are_estimates = false;
  // IR operators the profiler could not measure: they cost 0 in every
  // prediction (signature text: the profiler's reason).
  std::map<std::string, std::string> unmeasured_operators;
  std::string cost_device;     // the hardware (or model) the costs are for
  profiler::Backend cost_backend = profiler::BACKEND_UNSPECIFIED;  // the backend that answered the costs
  // The configuration optimized for (Report.threads, cost_backend_choice,
  // input_shapes).
  int threads = 0;
  std::string cost_backend_choice;
  std::vector<std::string> input_shapes;
  OnnxDialect dialect = OnnxDialect::kStandard;
  absl::Duration search_time;
  absl::Duration total_time;
  std::string search;          // "backtrack" or "eqsat"
  SearchStop stop_reason = SearchStop::kUnspecified;  // the search's, not extraction's
  // The search's own words; for eqsat with its e-graph's size and how the
  // program was extracted.
  std::string stop_detail;
  ExtractionOutcome extraction = ExtractionOutcome::kNotRun;
  std::string extraction_detail;
  std::map<std::string, int> rules_applied;
  int rules_available = 0;     // rewrites the search could use (both directions)
  int rules_unreachable = 0;   // rewrites left out: their patterns name kinds the search never sees
  int batchnorms_folded = 0;
  int constants_folded = 0;
  int cse_merged = 0;  // operators dropped before the search as duplicates (cse.h)
  int epilogues_fused = 0;
  int transpose_pairs_removed = 0;  // after the search (passes.h RemoveTransposePairs)
  int operators_before = 0, operators_after = 0;
  std::vector<std::string> opaque_operators;  // "domain::OpType"
  std::vector<std::string> import_notes;      // OnnxModel::import_notes
  int rule_bans = 0;           // eqsat: rules its backoff scheduler banned
  // eqsat: the ILP's outcome, incumbent, bound, gap and time, and how the
  // search time was spent (SearchReport's fields).
  IlpVerdict ilp = IlpVerdict::kNotApplicable;
  double ilp_incumbent_ms = 0, ilp_bound_ms = 0, ilp_gap = 0;
  double extraction_cost_ms = 0;
  absl::Duration ilp_time_limit, exploration_time, costing_time, extraction_time;
  NumericCheck check;
  // ONNX Runtime's comparison of the input and output files where the
  // never-slower step runs them there (runtime_check.h), or why it did not run.
  RuntimeCheck runtime_check;
  // Provenance (Report 47-50): version, rule-set digest, model bytes in and out.
  std::string taso_version, rules_digest, input_sha256, output_sha256;
  RuleProvenance rules;  // where the rules came from (OptimizerOptions::rules_provenance)
  // Readable forms of the rewrites in rules_applied that are proved rules
  // ("LHS => RHS", S-expressions), by rewrite name.
  std::map<std::string, std::string> rule_rewrites;
  // The input and returned models by ONNX operator type: {before, after}.
  std::map<std::string, std::pair<int, int>> onnx_operators;
  int64_t enodes = 0, eclasses = 0;  // eqsat's e-graph when exploration stopped (Report 51, 52)
  // True when the optimized model failed the numerical check (or could not
  // be exported and read back, or ONNX Runtime's outputs for it differ) and
  // the original was returned; `error` says why.
  bool returned_original = false;
  std::string error;
  // The search's result was the runtime baseline's own graph, so the input
  // came back byte for byte (not an error; OptimizerOptions::export_baseline).
  bool output_is_input = false;
  // The end-to-end measurement (MeasureVerdict), in ms; 0 when not run.
  // measured_speedup is baseline over result, as decided: the geometric mean
  // of the per-pass ratios where the backend timed both orders (which cancels
  // the bias of the order), else the ratio of the medians.
  double measured_baseline_ms = 0;
  double measured_after_ms = 0;
  double measured_speedup = 0;
  profiler::Backend measured_backend = profiler::BACKEND_UNSPECIFIED;
  int measured_runs = 0;  // timed runs per graph
  MeasureVerdict measurement = MeasureVerdict::kUnspecified;
  std::string measurement_detail;
};

struct OptimizeResult {
  std::string model;  // serialized ONNX
  // Where `model`'s external tensors are read from (WriteOnnxFiles): the
  // input's files when the input comes back, the export's data in memory
  // when an input with external data was optimized; empty otherwise.
  ExternalData model_data;
  OptimizeReport report;
  // The graphs behind the models, for pictures of what changed: the input as
  // imported, and `model` in the IR before export (a fusion that ONNX spells
  // as several nodes is one node here); the input again when it is returned.
  Graph input_graph;
  Graph graph;
  // Per node id of input_graph, the ONNX node it came from (OnnxNodeLabels).
  std::vector<std::string> input_origins;
};

// The search on an IR graph (batch norms folded first, constants after),
// checked against `graph` in the IR. Exposed for tests and benchmarks that
// build graphs directly.
struct GraphResult {
  Graph graph;
  OptimizeReport report;
};
absl::StatusOr<GraphResult> OptimizeGraph(const Graph& graph, const std::vector<RewriteRule>& rules,
                                          profiler::ProfilerClient& profiler, const OptimizerOptions& options);

// The SHA-256 (hex) of a rule set's ids, sorted, one a line; a rule and its
// backward direction count once. The report's rules_digest.
std::string RuleSetDigest(const std::vector<RewriteRule>& rules);

// InvalidArgument for a model that does not import (with the importer's
// message); Unavailable when the profiler cannot be reached. The check runs
// on what the user gets: the model as imported from `model_bytes` against the
// exported bytes imported again, so an export that changes what the model
// computes returns the input too.
absl::StatusOr<OptimizeResult> OptimizeOnnx(const std::string& model_bytes, const std::vector<RewriteRule>& rules,
                                            profiler::ProfilerClient& profiler, const OptimizerOptions& options);

// The same with the exporter given: tests hand in a faulty one to show the
// check catches what export breaks. ExportOnnx is the real one.
// An exporter given a sink writes the large tensors there (ExportOnnx).
using OnnxExporter =
    std::function<absl::StatusOr<std::string>(const OnnxModel& model, const Graph& graph, OnnxExternalSink* sink)>;
absl::StatusOr<OptimizeResult> OptimizeOnnx(const std::string& model_bytes, const std::vector<RewriteRule>& rules,
                                            profiler::ProfilerClient& profiler, const OptimizerOptions& options,
                                            const OnnxExporter& export_onnx);

// The check a client runs on what a server returned (`taso optimize
// --server`): `returned` read back and run against `input` (both ONNX bytes,
// read with options.import) in the float interpreter on random inputs, as
// OptimizeOnnx checks its own result (options.check). A model that does not
// import here is a check that did not run (ran false, reason says why).
NumericCheck CheckReturnedModel(const std::string& input, const std::string& returned,
                                const OptimizerOptions& options);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_OPTIMIZE_H_
