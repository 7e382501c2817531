#include "profiler/ort/ort_backend.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/scratch_dir.h"
#include "costs/host_cpus.h"
#include "profiler/ort/ort_model.h"
#include "profiler/ort/ort_opaque_model.h"

namespace taso::profiler {
namespace {

// Above one intra-op thread every session's workers spin after a run, so
// sessions alive side by side slow each other (worker.js,
// timeOneSessionAtATime): each model is timed with its session alone.
bool TimesOneSessionAtATime(int threads) { return threads > 1; }

// Above one thread a run of a lone small operator is mostly the thread
// pool's wake-up, which a model pays once a run, not once a node: a 1x512 by
// 512x512 matmul measured 36-38 us a node among 64 (in parallel or in a
// chain) and 41-47 us among 8. So an operator model holds enough nodes for
// about this much work a run (OrtNodes), at most kMaxTimedNodes, and when
// its nodes cannot be chained, at most kMaxTimedOutputs graph outputs: each
// is bound on every run, a few microseconds that the probe must cancel, so
// a split into 8 spread over 64 nodes had its cost lost in a 5 ms probe.
constexpr double kRampSpreadMs = 1.5;
constexpr int kMaxTimedNodes = 64;
constexpr int kMaxTimedOutputs = 64;
bool SpreadsOverNodes(int threads) { return threads > 1; }

// The name of how the worker and this backend time (worker.js): ort3 times
// sessions that never profiled, several models in blocks of runs; above one
// thread, ort7 times each model with its session the only one alive (as ort4
// did) and spreads an operator over many nodes (SpreadsOverNodes), chained
// where the operator's output can feed the next node (ort5 gave every node
// one shared input, so ORT merged the matmuls before fused activations; ort6
// gave each group an input and each node an output of its own, so a run
// bound hundreds of them and small operators were lost in the probe). A new
// method is a new device, so costs timed the old way are not served.
const char* TimingMethod(int threads) { return SpreadsOverNodes(threads) ? "ort7" : "ort3"; }

// A timed operator never costs 0 (that means "no kernel" to the graph cost
// model) even when it is lost in the run overhead's noise.
constexpr double kFloorMs = 1e-5;

struct LevelName {
  OrtOptimizationLevel level;
  const char* name;
};
constexpr LevelName kLevels[] = {
    {OrtOptimizationLevel::kDisabled, "disabled"}, {OrtOptimizationLevel::kBasic, "basic"},
    {OrtOptimizationLevel::kExtended, "extended"}, {OrtOptimizationLevel::kLayout, "layout"},
    {OrtOptimizationLevel::kAll, "all"},
};

std::string DescribeKernels(const std::vector<std::string>& kernels) {
  return kernels.empty() ? std::string("no kernel") : absl::StrJoin(kernels, "+");
}

// A number of the worker's answer; JSON has no NaN or infinity, which it
// writes as null.
double NumberOr(const nlohmann::json& object, const char* key, double otherwise) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : otherwise;
}

// One entry of a "compare" answer's "outputs" (worker.js).
OutputDifference OutputDifferenceFromJson(const nlohmann::json& o) {
  OutputDifference d;
  d.set_name(o.value("name", std::string()));
  d.set_elements(static_cast<int64_t>(NumberOr(o, "elements", 0)));
  d.set_mismatch(o.value("mismatch", std::string()));
  if (!d.mismatch().empty()) return d;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  d.set_exact(o.value("exact", false));
  d.set_max_abs_error(NumberOr(o, "max_abs_error", nan));
  d.set_max_rel_error(NumberOr(o, "max_rel_error", nan));
  d.set_differing(static_cast<int64_t>(NumberOr(o, "differing", 0)));
  d.set_nonfinite_mismatches(static_cast<int64_t>(NumberOr(o, "nonfinite_mismatches", 0)));
  d.set_worst_index(static_cast<int64_t>(NumberOr(o, "worst_index", 0)));
  d.set_worst_reference(NumberOr(o, "worst_reference", nan));
  d.set_worst_value(NumberOr(o, "worst_value", nan));
  return d;
}

}  // namespace

const char* OrtOptimizationLevelName(OrtOptimizationLevel level) {
  for (const LevelName& l : kLevels) {
    if (l.level == level) return l.name;
  }
  return "all";
}

std::optional<OrtOptimizationLevel> OrtOptimizationLevelFromName(const std::string& name) {
  for (const LevelName& l : kLevels) {
    if (name == l.name) return l.level;
  }
  return std::nullopt;
}

absl::StatusOr<OrtBackendOptions> OrtBackendOptionsFromFlags(const std::string& worker, int threads,
                                                             const std::string& level, int timeout_s,
                                                             int weight_mb, int timings) {
  OrtBackendOptions options;
  options.worker.script = worker;
  options.threads = threads;
  auto parsed = OrtOptimizationLevelFromName(level);
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ort_level must be disabled, basic, extended, layout or all (ONNX Runtime's graphOptimizationLevel), got '",
        level, "'"));
  }
  options.level = *parsed;
  if (threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--ort_threads must be >= 0 (0: one per physical core), got ", threads));
  }
  if (timeout_s < 1) return absl::InvalidArgumentError(absl::StrCat("--ort_timeout_s must be >= 1, got ", timeout_s));
  options.worker.call_timeout = absl::Seconds(timeout_s);
  if (weight_mb < 0) return absl::InvalidArgumentError(absl::StrCat("--ort_weight_mb must be >= 0, got ", weight_mb));
  options.weight_bytes = int64_t{weight_mb} << 20;
  if (timings < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--ort_timings must be >= 1 (each operator timed that often), got ",
                                                   timings));
  }
  options.timings = timings;
  return options;
}

OrtBackend::OrtBackend(const OrtBackendOptions& options, std::string model_dir)
    : options_(options), worker_(options.worker), model_dir_(std::move(model_dir)) {}

OrtBackend::~OrtBackend() {
  std::error_code ignored;
  std::filesystem::remove_all(model_dir_, ignored);
}

absl::StatusOr<std::unique_ptr<OrtBackend>> OrtBackend::Create(const OrtBackendOptions& asked) {
  if (asked.timings < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ort backend: each operator must be timed at least once, got ",
                                                   asked.timings));
  }
  if (asked.threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat("ort backend: intra-op threads must be >= 0, got ",
                                                   asked.threads, " (--ort_threads)"));
  }
  // The count is resolved here, not left to ORT: it is part of the device,
  // so costs cached at one count are never served for another.
  OrtBackendOptions options = asked;
  if (options.threads == 0) options.threads = RuntimeDefaultThreads();
  auto dir = MakePrivateTempDir("ort-models");
  if (!dir.ok()) return dir.status();
  std::unique_ptr<OrtBackend> backend(new OrtBackend(options, *std::move(dir)));
  auto hello = backend->worker_.Call({{"cmd", "hello"}});
  if (!hello.ok()) return hello.status();
  backend->device_ = absl::StrCat(
      "ort: onnxruntime ", hello->value("ort_version", "?"), " via node ", hello->value("node_version", "?"),
      ", cpu EP, ", options.threads, " intra-op thread", options.threads == 1 ? "" : "s", ", level ",
      OrtOptimizationLevelName(options.level), "; ", hello->value("cpu_model", "unknown cpu"), ", ",
      hello->value("cpus", 0), " cpus; timing ", TimingMethod(options.threads),
      options.timings > 1 ? absl::StrCat(", fastest of ", options.timings) : "", ", weights ",
      options.weight_bytes >> 20, " MiB");
  return backend;
}

absl::StatusOr<std::string> OrtBackend::WriteModel(const std::string& model) {
  const std::string path = absl::StrCat(model_dir_, "/m", next_model_++, ".onnx");
  std::ofstream out(path, std::ios::binary);
  out.write(model.data(), static_cast<std::streamsize>(model.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("ort backend: cannot write ", path));
  return path;
}

absl::StatusOr<std::string> OrtBackend::OverheadModel(int inputs, int outputs) {
  auto known = overhead_models_.find({inputs, outputs});
  if (known != overhead_models_.end()) return known->second;
  auto model = TimingModel(RunOverheadGraph(inputs, outputs));
  if (!model.ok()) return model.status();
  auto path = WriteModel(*model);
  if (!path.ok()) return path.status();
  overhead_models_[{inputs, outputs}] = *path;
  return *path;
}

absl::StatusOr<std::vector<absl::StatusOr<OrtBackend::Timed>>> OrtBackend::Time(
    const std::vector<std::string>& paths, int warmup, int min_runs, int max_runs, double min_ms) {
  nlohmann::json request = {{"cmd", "time"},
                            {"models", paths},
                            {"threads", options_.threads},
                            {"level", OrtOptimizationLevelName(options_.level)},
                            {"warmup", std::max(warmup, 1)},
                            {"min_runs", std::max(min_runs, 1)},
                            {"max_runs", std::max({max_runs, min_runs, 1})},
                            {"min_ms", std::max(min_ms, 0.0)},
                            {"seed", 1},
                            {"one_session", TimesOneSessionAtATime(options_.threads)}};
  auto answer = worker_.Call(std::move(request));
  if (!answer.ok()) return answer.status();
  const nlohmann::json& results = (*answer)["results"];
  if (!results.is_array() || results.size() != paths.size()) {
    return absl::InternalError("the ORT worker's answer does not have one result per model");
  }
  std::vector<absl::StatusOr<Timed>> out;
  for (const nlohmann::json& r : results) {
    if (!r.value("ok", false) || !r.contains("times_ms") || r["times_ms"].empty()) {
      out.push_back(absl::UnimplementedError(
          absl::StrCat("ONNX Runtime cannot run it: ", r.value("error", std::string("no timed runs")))));
      continue;
    }
    Timed t;
    t.times_ms = r["times_ms"].get<std::vector<double>>();
    t.kernels = r.value("kernels", std::vector<std::string>{});
    t.nodes = r.value("nodes", 0);
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<OneOperatorModel> OrtBackend::OperatorModel(const CanonicalSignature& signature, int copies, int nodes) {
  if (signature.op.kind == OpKind::kOpaque) return OpaqueTimingModel(signature, copies, nodes);
  auto graph = SignatureGraph(signature, copies, nodes);
  if (!graph.ok()) return graph.status();
  auto model = TimingModel(graph->graph);
  if (!model.ok()) {
    return absl::UnimplementedError(absl::StrCat("cannot write ", signature.key, " as ONNX: ", model.status().message()));
  }
  OneOperatorModel out{*std::move(model), 0, static_cast<int>(graph->graph.outputs().size()),
                       graph->operators};
  for (const Node& n : graph->graph.nodes()) out.graph_inputs += n.kind == OpKind::kInput;
  return out;
}

absl::StatusOr<Measurement> OrtBackend::Measure(const CanonicalSignature& signature, const TimingOptions& options) {
  const OpKind kind = signature.op.kind;
  if (kind == OpKind::kReshape || (kind == OpKind::kTranspose && !signature.op.params.shuffle)) {
    Measurement m;
    m.kernel = kind == OpKind::kReshape ? "view: ORT reuses the buffer" : "view: ORT folds it into its reader";
    return m;
  }
  const int copies = OrtCopies(signature, options_.weight_bytes, options_.max_copies);
  const int nodes = SpreadsOverNodes(options_.threads)
                        ? OrtNodes(signature, copies, kRampSpreadMs, kMaxTimedNodes, kMaxTimedOutputs)
                        : copies;
  // An opaque operator the same way as an IR one: its own model, timed
  // against a run-overhead probe of as many inputs and outputs.
  auto model = OperatorModel(signature, copies, nodes);
  if (!model.ok()) return model.status();
  auto overhead_model = OverheadModel(model->graph_inputs, model->graph_outputs);
  if (!overhead_model.ok()) return overhead_model.status();
  auto path = WriteModel(model->onnx);
  if (!path.ok()) return path.status();
  auto timed = Time({*overhead_model, *path}, options.warmup, options.repetitions, options.max_repetitions,
                    options.min_timed_ms);
  std::error_code ignored;
  std::filesystem::remove(*path, ignored);
  if (!timed.ok()) return timed.status();
  if (!(*timed)[0].ok()) return (*timed)[0].status();
  if (!(*timed)[1].ok()) return (*timed)[1].status();
  const double overhead = Summarize((*timed)[0]->times_ms).median_ms;
  Measurement m = Summarize((*timed)[1]->times_ms);
  const int per = std::max(model->operators, 1);
  m.mean_ms = std::max((m.mean_ms - overhead) / per, kFloorMs);
  m.median_ms = std::max((m.median_ms - overhead) / per, kFloorMs);
  m.min_ms = std::max((m.min_ms - overhead) / per, kFloorMs);
  m.stddev_ms /= per;
  std::string spread;
  if (per > copies) {
    spread = absl::StrCat("; per node of ", per, copies > 1 ? absl::StrCat(" over ", copies, " weight sets") : "");
  } else if (copies > 1) {
    spread = absl::StrCat("; per copy of ", copies);
  }
  m.kernel = absl::StrFormat("ort %s (run overhead %.4f ms subtracted%s)", DescribeKernels((*timed)[1]->kernels),
                             overhead, spread);
  return m;
}

absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> OrtBackend::MeasureGraphs(
    const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
    const std::function<bool()>& cancelled) {
  const int n = static_cast<int>(graphs.size());
  std::vector<absl::StatusOr<GraphTiming>> results(n, GraphTiming{});
  std::vector<std::string> paths(n);
  for (int i = 0; i < n; ++i) {
    auto model = TimingModel(*graphs[i]);
    if (!model.ok()) {
      results[i] = absl::UnimplementedError(absl::StrCat("cannot write the graph as ONNX: ", model.status().message()));
      continue;
    }
    auto path = WriteModel(*model);
    if (!path.ok()) return path.status();
    paths[i] = *path;
  }
  absl::Status timed = TimeInterleaved(paths, options, cancelled, results);
  if (!timed.ok()) return timed;
  return results;
}

absl::StatusOr<std::vector<std::string>> OrtBackend::ModelPaths(const std::vector<OnnxModelSource>& models) {
  std::vector<std::string> paths;
  for (const OnnxModelSource& model : models) {
    if (!model.path.empty()) {
      paths.push_back(model.path);
      continue;
    }
    auto path = WriteModel(model.bytes);
    if (!path.ok()) {
      RemoveWritten(paths);
      return path.status();
    }
    paths.push_back(*path);
  }
  return paths;
}

void OrtBackend::RemoveWritten(const std::vector<std::string>& paths) const {
  std::error_code ignored;
  for (const std::string& p : paths) {
    if (absl::StartsWith(p, model_dir_ + "/")) std::filesystem::remove(p, ignored);
  }
}

absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> OrtBackend::MeasureModels(
    const std::vector<OnnxModelSource>& onnx_models, const GraphTimingOptions& options,
    const std::function<bool()>& cancelled) {
  std::vector<absl::StatusOr<GraphTiming>> results(onnx_models.size(), GraphTiming{});
  auto paths = ModelPaths(onnx_models);
  if (!paths.ok()) return paths.status();
  absl::Status timed = TimeInterleaved(*paths, options, cancelled, results);
  if (!timed.ok()) return timed;
  return results;
}

absl::StatusOr<std::vector<ModelComparison>> OrtBackend::CompareModels(const std::vector<OnnxModelSource>& onnx_models,
                                                                       uint64_t seed) {
  auto written = ModelPaths(onnx_models);
  if (!written.ok()) return written.status();
  const std::vector<std::string>& paths = *written;
  nlohmann::json request = {{"cmd", "compare"},
                            {"models", paths},
                            {"threads", options_.threads},
                            {"level", OrtOptimizationLevelName(options_.level)},
                            {"seed", seed & 0xffffffffu}};
  auto answer = worker_.Call(std::move(request));
  RemoveWritten(paths);
  if (!answer.ok()) return answer.status();
  const nlohmann::json& results = (*answer)["results"];
  if (!results.is_array() || results.size() != paths.size()) {
    return absl::InternalError("the ORT worker's comparison does not have one result per model");
  }
  const bool reference_ran = results[0].value("ok", false);
  std::vector<ModelComparison> out;
  for (size_t i = 1; i < results.size(); ++i) {
    ModelComparison& c = out.emplace_back();
    if (!reference_ran) {
      c.set_failure(ModelComparison::REFERENCE_FAILED);
      c.set_error(absl::StrCat("ONNX Runtime cannot run the first model: ",
                               results[0].value("error", std::string("no reason given"))));
    } else if (!results[i].value("ok", false)) {
      c.set_failure(ModelComparison::MODEL_FAILED);
      c.set_error(
          absl::StrCat("ONNX Runtime cannot run it: ", results[i].value("error", std::string("no reason given"))));
    } else {
      for (const nlohmann::json& o : results[i].value("outputs", nlohmann::json::array())) {
        *c.add_outputs() = OutputDifferenceFromJson(o);
      }
    }
  }
  return out;
}

absl::Status OrtBackend::TimeInterleaved(const std::vector<std::string>& paths, const GraphTimingOptions& options,
                                         const std::function<bool()>& cancelled,
                                         std::vector<absl::StatusOr<GraphTiming>>& results) {
  const int n = static_cast<int>(paths.size());
  const int passes = GraphTimingPasses(n);
  std::vector<std::vector<std::vector<double>>> samples(n, std::vector<std::vector<double>>(passes));
  const int runs = std::max(1, (options.runs + passes - 1) / passes);
  const int max_runs = std::max(runs, options.max_runs / passes);
  absl::Status failed;
  for (int pass = 0; pass < passes && failed.ok(); ++pass) {
    if (cancelled && cancelled()) {
      failed = absl::CancelledError(absl::StrCat("whole-graph measurement cancelled (deadline passed or client gone) ",
                                                 "before pass ", pass + 1));
      break;
    }
    std::vector<int> order;
    for (int i : GraphTimingOrder(n, pass)) {
      if (results[i].ok()) order.push_back(i);
    }
    if (order.empty()) break;
    std::vector<std::string> pass_paths;
    for (int i : order) pass_paths.push_back(paths[i]);
    auto timed = Time(pass_paths, options.warmup, runs, max_runs, options.min_timed_ms / passes);
    if (!timed.ok()) {
      failed = timed.status();
      break;
    }
    for (size_t k = 0; k < order.size(); ++k) {
      const int i = order[k];
      if (!(*timed)[k].ok()) {
        results[i] = (*timed)[k].status();
        continue;
      }
      samples[i][pass] = (*timed)[k]->times_ms;
      results[i]->kernels = (*timed)[k]->nodes;
    }
  }
  RemoveWritten(paths);
  if (!failed.ok()) return failed;
  SummarizeGraphTimings(samples, results);
  return absl::OkStatus();
}

}  // namespace taso::profiler
