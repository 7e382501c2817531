#include "cli/optimize_command.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "app/startup.h"
#include "cli/command_pictures.h"
#include "cli/progress_printer.h"
#include "cluster/processes.h"
#include "cluster/store_set.h"
#include "core/json_text.h"
#include "core/proto_json.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/digest.h"
#include "net/grpc_status.h"
#include "onnx_io/onnx_external_data.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/optimize.h"
#include "optimizer/optimize_options.h"
#include "optimizer/report_proto.h"
#include "optimizer/rule_source.h"
#include "profiler/open_client.h"
#include "proto/optimizer.grpc.pb.h"

namespace taso::cli {
namespace {

// The status code a failure's exit code stands for, in --json's error object.
absl::StatusCode StatusCodeOfExit(int exit_code) {
  switch (exit_code) {
    case 2: return absl::StatusCode::kInvalidArgument;
    case 3: return absl::StatusCode::kUnavailable;
    default: return absl::StatusCode::kInternal;
  }
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream file;
  file << in.rdbuf();
  return file.str();
}

// The model at `path` (its bytes `model`) and each data file it names beside
// it, with their SHA-256s, appended to `files` (Report.input_files).
absl::Status DigestModelFiles(const std::string& path, const std::string& model,
                              google::protobuf::RepeatedPtrField<optimizer::FileDigest>& files) {
  optimizer::FileDigest& onnx = *files.Add();
  onnx.set_file(path);
  onnx.set_sha256(net::Sha256Hex(model));
  auto locations = ExternalDataLocations(model);
  if (!locations.ok()) return locations.status();
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (const std::string& location : *locations) {
    auto digest = net::FileSha256Hex((dir / location).string());
    if (!digest.ok()) return digest.status();
    optimizer::FileDigest& data = *files.Add();
    data.set_file(location);
    data.set_sha256(*std::move(digest));
  }
  return absl::OkStatus();
}

// A written result's exit code: 4 when the input came back after a failed
// check; 5 when the output is not the input and was not measured against it
// (the cost backend cannot run whole graphs, --no-measure, or the
// measurement failed), so "not slower" is the cost model's prediction and
// not a measurement; 0 otherwise.
int ResultExitCode(const optimizer::Report& r) {
  if (r.returned_original()) return 4;
  if (r.output_is_input()) return 0;
  switch (r.measurement()) {
    case optimizer::SKIPPED_DISABLED:
    case optimizer::SKIPPED_BACKEND_CANNOT_RUN:
    case optimizer::FAILED:
      return kExitNotMeasured;
    default:
      return 0;
  }
}

int ExitCode(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      return 2;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kResourceExhausted:  // a busy server: worth retrying, like one that is down
      return 3;
    default:
      return 1;
  }
}

// eqsat: where the time limit went, and what the ILP proved.
void PrintEqsatBudget(const optimizer::Report& r, std::ostream& out) {
  if (r.ilp_outcome() == optimizer::ILP_OUTCOME_UNSPECIFIED) return;
  out << absl::StrFormat("  eqsat time: exploration %.1f s, costing %.1f s, extraction %.1f s (ilp given %.1f s)\n",
                         r.exploration_ms() / 1000.0, r.costing_ms() / 1000.0, r.extraction_ms() / 1000.0,
                         r.ilp_time_limit_ms() / 1000.0);
  switch (r.ilp_outcome()) {
    case optimizer::ILP_OPTIMAL:
      out << absl::StrFormat("  ilp: optimal (proved), %.4f ms\n", r.ilp_incumbent_ms());
      break;
    case optimizer::ILP_STOPPED_WITH_GAP:
      out << absl::StrFormat("  ilp: stopped with incumbent %.4f ms, bound %.4f ms, gap %.1f%%\n",
                             r.ilp_incumbent_ms(), r.ilp_bound_ms(), 100 * r.ilp_gap());
      break;
    default:
      out << "  ilp: no result, greedy's program used (" << r.extraction_detail() << ")\n";
  }
  if (r.extraction_cost_ms() > 0) {
    out << absl::StrFormat("  extraction cost: %.4f ms (the chosen e-nodes' costs, each once)\n",
                           r.extraction_cost_ms());
  }
}

// The ONNX operator types whose count changed, before and after, in the
// model's own vocabulary (the IR's kinds are ours, not the user's).
void PrintOperatorTable(const optimizer::Report& r, std::ostream& out) {
  std::vector<const optimizer::OperatorCount*> changed;
  for (const auto& c : r.onnx_operators()) {
    if (c.before() != c.after()) changed.push_back(&c);
  }
  if (changed.empty()) return;
  out << "  ONNX operators that changed (before -> after):\n";
  for (const optimizer::OperatorCount* c : changed) {
    out << absl::StrFormat("    %-24s %5d -> %d\n", c->op_type(), c->before(), c->after());
  }
}

// --rules, --store, --db or the built-in set.
absl::StatusOr<optimizer::RuleSet> LoadCommandRules(const OptimizeCommandOptions& options) {
  if ((!options.rules.empty()) + (!options.store.empty()) + (!options.db.empty()) > 1) {
    return absl::InvalidArgumentError("give one of --rules, --store and --db");
  }
  if (options.db.empty()) return optimizer::LoadRules(options.rules, options.store);
  if (cluster::StoreDirs(options.db).empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no rule database at ", options.db,
                                                   " (make one with `taso generate --db DIR && taso verify --db DIR`)"));
  }
  (void)cluster::MakeLogDir(options.db);
  auto stores = cluster::StoreSet::Open("", options.db, options.db + "/logs");
  if (!stores.ok()) return stores.status();
  auto loaded = optimizer::FetchRules(absl::StrJoin((*stores)->addresses(), ","));
  if (!loaded.ok()) return loaded.status();
  loaded->provenance.origin = optimizer::RuleOrigin::kLocalDatabase;
  loaded->provenance.location = options.db;
  return loaded;
}

// What the model was optimized for: its threads and input shapes, and
// where the costs came from (and why there, when taso chose).
void PrintConfiguration(const optimizer::Report& r, std::ostream& out) {
  out << "optimized for: ";
  if (r.threads() > 0) out << r.threads() << " thread" << (r.threads() == 1 ? "" : "s") << ", ";
  out << (r.input_shapes_size() > 0 ? absl::StrJoin(r.input_shapes(), " ") : std::string("no graph inputs"));
  out << "; costs from " << profiler::BackendName(r.cost_backend());
  if (!r.cost_backend_choice().empty()) out << " (chosen: " << r.cost_backend_choice() << ")";
  if (r.target() == optimizer::EXPORT_TARGET_ORT) out << "; written for ONNX Runtime (its contrib operators allowed)";
  out << "\n";
  if (!r.cost_device().empty()) out << "  measured on " << r.cost_device() << "\n";
}

void PrintReport(const optimizer::Report& r, const std::string& output, bool json, std::ostream& out) {
  if (json) {
    // Compact, as the report has always been printed: scripts match "key":value.
    out << ProtoToJson(r).dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    return;
  }
  // The baseline first: it is what a user of a real runtime compares with.
  auto ratio = [&](double before) { return r.cost_after_ms() > 0 ? before / r.cost_after_ms() : 1.0; };
  out << absl::StrFormat("speedup vs baseline %.2f\u00d7 (vs raw input %.2f\u00d7)%s\n", ratio(r.cost_baseline_ms()),
                         ratio(r.cost_raw_ms()), r.costs_are_estimates() ? " (estimates)" : "");
  out << absl::StrFormat("cost %.3f ms (raw input) / %.3f ms (runtime baseline) -> %.3f ms, %d -> %d operators\n",
                         r.cost_raw_ms(), r.cost_baseline_ms(), r.cost_after_ms(), r.nodes_before(), r.nodes_after());
  PrintConfiguration(r, out);
  if (!r.cost_model().empty()) out << "cost model: " << r.cost_model() << "\n";
  if (r.unmeasured_operators_size() > 0) {
    // Sorted, so the text is the same run to run.
    std::map<std::string, std::string> unmeasured(r.unmeasured_operators().begin(), r.unmeasured_operators().end());
    out << "warning: " << unmeasured.size() << " operator(s) could not be measured and cost 0 in these predictions:\n";
    int shown = 0;
    for (const auto& [signature, why] : unmeasured) {
      if (++shown > 5) {
        out << "  ... (all in --json: unmeasured_operators)\n";
        break;
      }
      out << "  " << signature << ": " << why << "\n";
    }
  }
  out << absl::StrFormat("%s search: %.1f s, %s; %d rewrites available", r.search(), r.search_time_ms() / 1000.0,
                         r.stop_detail(), r.rules_available());
  if (r.rules_unreachable() > 0) out << " (" << r.rules_unreachable() << " more could never match this model)";
  out << "\n";
  for (const auto& a : r.rules_applied()) {
    out << "  applied " << a.count() << "x " << a.rule_id();
    if (!a.rewrite().empty()) out << ": " << a.rewrite();
    out << "\n";
  }
  if (r.batchnorms_folded() > 0) out << "  batch norms folded: " << r.batchnorms_folded() << "\n";
  if (r.cse_merged() > 0) out << "  duplicate operators merged: " << r.cse_merged() << "\n";
  if (r.epilogues_fused() > 0) out << "  fused after the search: " << r.epilogues_fused() << "\n";
  if (r.transpose_pairs_removed() > 0) {
    out << "  transpose pairs removed after the search: " << r.transpose_pairs_removed()
        << " (each composed to the identity; ONNX Runtime cancels them too)\n";
  }
  if (r.rule_bans() > 0) out << "  eqsat rule bans: " << r.rule_bans() << "\n";
  PrintEqsatBudget(r, out);
  for (const auto& note : r.import_notes()) out << "  import: " << note << "\n";
  PrintOperatorTable(r, out);
  if (r.opaque_operators_size() > 0) {
    out << "  passed through untouched:";
    for (const auto& op : r.opaque_operators()) out << " " << op;
    out << "\n";
  }
  out << "check";
  if (r.check_seed() != 0) out << " (seed " << r.check_seed() << ")";
  out << ": " << r.check_detail() << "\n";
  if (r.local_check() != optimizer::LOCAL_CHECK_UNSPECIFIED) out << "checked here: " << r.local_check_detail() << "\n";
  // ONNX Runtime's own reading of the files, beside ours.
  if (!r.runtime_check_detail().empty()) out << "runtime check: " << r.runtime_check_detail() << "\n";
  if (r.measurement() == optimizer::MEASURED_KEPT_CANDIDATE || r.measurement() == optimizer::MEASURED_KEPT_BASELINE ||
      r.measurement() == optimizer::MEASURED_KEPT_REEXPORT) {
    out << absl::StrFormat("measured end to end: %.3f ms -> %.3f ms (%.2fx) against the runtime baseline\n",
                           r.measured_baseline_ms(), r.measured_after_ms(),
                           r.measured_after_ms() > 0 ? r.measured_baseline_ms() / r.measured_after_ms() : 1.0);
  }
  if (!r.measurement_detail().empty()) out << "  " << r.measurement_detail() << "\n";
  if (r.returned_original()) out << "NOT OPTIMIZED: " << r.error() << "\n";
  if (ResultExitCode(r) == kExitNotMeasured) {
    out << "NOT MEASURED: the output was not timed against the input, so its speedup is the cost model's "
           "prediction (exit 5; the measurement field says why)\n";
  }
  if (r.output_is_input()) out << "unchanged: the input is returned byte for byte (--export-baseline for the folded, fused re-export)\n";
  out << "wrote " << output << "\n";
  out << "rules: " << optimizer::DescribeRules(optimizer::RuleProvenanceFromReport(r)) << "\n";
  out << "taso " << r.taso_version() << ", in sha256 " << r.input_sha256().substr(0, 16) << ", out sha256 "
      << r.output_sha256().substr(0, 16) << "\n";
  // A model with external data is more than its .onnx: every file's digest.
  for (const auto* files : {&r.input_files(), &r.output_files()}) {
    if (files->size() < 2) continue;
    out << (files == &r.input_files() ? "input files:" : "output files:");
    for (const optimizer::FileDigest& f : *files) out << " " << f.file() << " sha256 " << f.sha256().substr(0, 16);
    out << "\n";
  }
}

// One `taso optimize`: checks the command, runs the optimizer embedded or
// on a server, writes OUT and the report. Each step returns an exit code
// (kContinue to go on).
class OptimizeRun {
 public:
  static constexpr int kContinue = -1;

  OptimizeRun(const OptimizeCommandOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int Run() {
    if (int code = CheckCommand(); code != kContinue) return code;
    if (int code = ReadInput(); code != kContinue) return code;
    if (!options_.quiet) {
      progress_.emplace(err_, "taso optimize", absl::Seconds(4),
                        absl::StrCat(SearchName(), ", limit ", options_.request.time_limit_s(), " s"));
    }
    const int code = options_.server.empty() ? OptimizeEmbedded() : OptimizeOnServer();
    if (code != kContinue) return code;
    progress_.reset();  // its last line before the report
    // As the input was written: with its large tensors in OUT.data when it
    // kept them in external files.
    if (absl::Status written = WriteOnnxFiles(options_.output, model_, model_data_, external_); !written.ok()) {
      return Fail(1, std::string(written.message()));
    }
    // Digested once the optimizer has read every data file, so that a
    // missing one is reported as the import words it.
    if (absl::Status digested = DigestFiles(); !digested.ok()) {
      return Fail(1, absl::StrCat("digesting the model files: ", digested.message()));
    }
    PrintReport(report_, options_.output, options_.json, out_);
    if (int code = DrawDiff(); code != kContinue) return code;
    return ResultExitCode(report_);
  }

 private:
  int FailAs(int code, absl::StatusCode status, const std::string& message) {
    err_ << "taso optimize: " << message << "\n";
    if (options_.json) out_ << app::ErrorJson(status, message, code) << "\n";
    return code;
  }
  int Fail(int code, const std::string& message) { return FailAs(code, StatusCodeOfExit(code), message); }
  int Fail(const absl::Status& s) { return FailAs(ExitCode(s), s.code(), std::string(s.message())); }

  std::string SearchName() const { return options_.request.search() == optimizer::SEARCH_EQSAT ? "eqsat" : "backtrack"; }

  // What this process's optimizer would run with: the request over the
  // optimizer's own defaults and this command's caps.
  absl::StatusOr<optimizer::OptimizerOptions> Resolve() const {
    optimizer::OptionDefaults defaults;
    defaults.measure_tolerance = options_.measure_tolerance;
    if (options_.ilp_memory_mb) defaults.ilp_memory_mb = *options_.ilp_memory_mb;
    if (options_.max_check_mb) defaults.max_check_bytes = *options_.max_check_mb << 20;
    if (options_.max_check_gflop) {
      auto flops = optimizer::MaxCheckFlopsFromGflop(*options_.max_check_gflop, "--max-check-gflop");
      if (!flops.ok()) return flops.status();
      defaults.max_check_flops = *flops;
    }
    defaults.max_model_bytes = options_.max_model_mb.value_or(kEmbeddedMaxModelMb) << 20;
    return optimizer::ResolveOptimizeOptions(options_.request, defaults);
  }

  // Everything that can be refused before reading the model.
  int CheckCommand() {
    if (options_.input.empty()) return Fail(2, "give the model: taso optimize IN.onnx -o OUT.onnx");
    if (!options_.extra_argument.empty()) {
      return Fail(2, absl::StrCat("unexpected argument '", options_.extra_argument, "': give one model"));
    }
    if (options_.output.empty()) return Fail(2, "give the output file: -o OUT.onnx");
    if (!options_.invalid_flag.empty()) return Fail(2, options_.invalid_flag);
    if (!(options_.measure_tolerance >= 0)) {
      return Fail(2, "--measure-tolerance must be >= 0 (a fraction: 0.01 is 1 %)");
    }
    // The same resolution the server does, so a bad value is refused here
    // before anything is sent.
    auto resolved = Resolve();
    if (!resolved.ok()) return Fail(2, std::string(resolved.status().message()));
    resolved_ = *std::move(resolved);
    if (options_.ilp_memory_mb && *options_.ilp_memory_mb < 1) return Fail(2, "--ilp-memory-mb must be at least 1 (MiB)");
    if (options_.max_check_mb && *options_.max_check_mb < 1) return Fail(2, "--max-check-mb must be at least 1 (MiB)");
    if (options_.max_model_mb && *options_.max_model_mb < 1) return Fail(2, "--max-model-mb must be at least 1 (MiB)");
    if (!options_.server.empty() &&
        (options_.ilp_memory_mb || options_.max_check_mb || options_.max_check_gflop || options_.max_model_mb)) {
      return Fail(2, "--ilp-memory-mb, --max-check-mb, --max-check-gflop and --max-model-mb set the embedded "
                     "optimizer's caps; a taso_optimizer (--server) has its own --ilp_memory_mb, --max_check_mb, "
                     "--max_check_gflop and --max_model_mb flags");
    }
    if (!options_.dump_egraph.empty()) {
      if (options_.request.search() != optimizer::SEARCH_EQSAT) {
        return Fail(2, "--dump-egraph writes eqsat's e-graph: add --search eqsat");
      }
      if (!options_.server.empty()) {
        return Fail(2, "--dump-egraph needs the embedded optimizer (the e-graph is built in this process): drop --server");
      }
      // Before the search, not after it: an unwritable path is found at once.
      if (!std::ofstream(options_.dump_egraph)) {
        return Fail(2, absl::StrCat("--dump-egraph: cannot write ", options_.dump_egraph));
      }
    }
    if (!options_.diff_svg.empty()) {
      if (options_.diff_svg_max_nodes < 1) return Fail(2, "--diff-svg-max-nodes must be at least 1");
      // Before the search, not after it: a missing Graphviz is found at once.
      if (auto graphviz = FindGraphviz(); !graphviz.ok()) return Fail(1, std::string(graphviz.status().message()));
    }
    return kContinue;
  }

  // Report.input_files and output_files. A written model with external data
  // is a small .onnx, read back for the files it names; one without is
  // digested from disk, a block at a time.
  absl::Status DigestFiles() {
    report_.clear_input_files();
    report_.clear_output_files();
    if (absl::Status in = DigestModelFiles(options_.input, external_ ? input_as_read_ : input_,
                                           *report_.mutable_input_files());
        !in.ok()) {
      return in;
    }
    if (external_) {
      auto written = ReadFile(options_.output);
      if (!written.ok()) return written.status();
      return DigestModelFiles(options_.output, *written, *report_.mutable_output_files());
    }
    auto digest = net::FileSha256Hex(options_.output);
    if (!digest.ok()) return digest.status();
    optimizer::FileDigest& onnx = *report_.add_output_files();
    onnx.set_file(options_.output);
    onnx.set_sha256(*std::move(digest));
    return absl::OkStatus();
  }

  int ReadInput() {
    auto read = ReadFile(options_.input);
    if (!read.ok()) return Fail(2, std::string(read.status().message()));
    input_ = *std::move(read);
    auto external = UsesExternalData(input_);
    if (!external.ok()) return Fail(external.status());
    external_ = *external;
    // As read, before a server's copy is inlined: what sha256sum gives.
    if (external_) input_as_read_ = input_;
    if (!external_) return kContinue;
    const ExternalData beside = ExternalData::Directory(std::filesystem::path(options_.input).parent_path().string());
    if (options_.server.empty()) {
      // The optimizer reads the data files itself: the model may be larger
      // than one message holds.
      resolved_.import.external_data = beside;
      return kContinue;
    }
    // A server takes the model as one message, data inline.
    auto inlined = InlineExternalData(input_, beside, std::numeric_limits<int64_t>::max());
    if (!inlined.ok()) return Fail(inlined.status());
    input_ = *std::move(inlined);
    return kContinue;
  }

  int OptimizeOnServer() {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(1 << 30);
    args.SetMaxSendMessageSize(1 << 30);
    auto channel = taso::net::NewChannel(options_.server, args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      return Fail(3, absl::StrCat("taso_optimizer at ", options_.server, " is unreachable"));
    }
    auto stub = optimizer::Optimizer::NewStub(channel);
    optimizer::OptimizeRequest request;
    request.set_model(input_);
    request.set_model_name(options_.input);
    *request.mutable_options() = options_.request;
    if (progress_) {
      progress_->Waiting(absl::StrCat("sent to taso_optimizer at ", options_.server, ", waiting for its result"));
    }
    grpc::ClientContext context;
    // The search may use the whole limit; import, check and export come on top.
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(options_.request.time_limit_s() * 3000) +
                                                   120000));
    optimizer::OptimizeResponse response;
    absl::Status s = net::FromGrpc(stub->Optimize(&context, request, &response),
                                   absl::StrCat("taso_optimizer at ", options_.server));
    if (!s.ok()) return Fail(s);
    model_ = std::move(*response.mutable_model());
    report_ = response.report();
    CheckWhatCameBack();
    return kContinue;
  }

  // A server's model is run against the input here before it is written:
  // the numerical check the embedded optimizer runs on its own result, on
  // the user's machine, so a faulty or hostile server cannot hand back a
  // different function. On a failure the input is written instead (exit 4).
  void CheckWhatCameBack() {
    if (model_ == input_) {
      report_.set_local_check(optimizer::LOCAL_CHECK_INPUT_RETURNED);
      report_.set_local_check_detail("the server returned the input byte for byte");
      return;
    }
    if (progress_) progress_->EnterPhase(optimizer::OptimizePhase::kCheck);
    const optimizer::NumericCheck check = optimizer::CheckReturnedModel(input_, model_, resolved_);
    if (check.ran && check.equal) {
      report_.set_local_check(optimizer::LOCAL_CHECK_PASSED);
      report_.set_local_check_detail(absl::StrFormat(
          "the server's model agrees with the input on %d random input sets (seed %d), largest difference %g",
          resolved_.check.seeds, check.seed, check.max_abs_diff));
      return;
    }
    report_.set_local_check(optimizer::LOCAL_CHECK_FAILED);
    report_.set_local_check_detail(absl::StrCat("the server's model ",
                                                check.ran ? "differs from the input here (" : "could not be checked here (",
                                                check.reason, "); the input was written instead"));
    report_.set_returned_original(true);
    report_.set_error(report_.local_check_detail());
    model_ = input_;
    report_.set_output_sha256(net::Sha256Hex(model_));  // what was sent, not what the server says it was
  }

  int OptimizeEmbedded() {
    if (progress_) progress_->EnterPhase(optimizer::OptimizePhase::kLoadingRules);
    auto loaded = LoadCommandRules(options_);
    if (!loaded.ok()) return Fail(loaded.status());
    if (std::string warning = optimizer::UnusableRulesWarning(*loaded); !warning.empty()) {
      err_ << "taso optimize: warning: " << warning << "\n";
    }
    profiler::ProfilerOptions embedded;
    embedded.cache_dir = profiler::CacheDirFromFlag(options_.cache_dir);
    embedded.cpu.calibration = options_.calibration;
    embedded.ort = options_.ort;
    embedded.cpu.threads = options_.threads;
    // Two CI jobs optimizing at once on one machine share the default cache:
    // the second reads it and keeps what it measures in memory.
    embedded.when_cache_in_use = profiler::WhenCacheInUse::kReadSnapshot;
    profiler::CostProfiler* embedded_profiler = nullptr;
    auto client = profiler::OpenProfiler(options_.profiler, embedded, &embedded_profiler);
    if (client.ok() && embedded_profiler != nullptr && !embedded_profiler->cache_note().empty()) {
      err_ << "taso optimize: warning: " << embedded_profiler->cache_note() << "\n";
    }
    if (!client.ok()) {
      // Unreachable (3): the server, or the embedded profiler's cache held by another process.
      const bool unreachable = !options_.profiler.empty() ||
                               client.status().code() == absl::StatusCode::kFailedPrecondition;
      return Fail(unreachable ? 3 : 1, std::string(client.status().message()));
    }
    optimizer::OptimizerOptions& oo = resolved_;
    oo.progress = progress_ ? &*progress_ : nullptr;
    oo.rules_provenance = loaded->provenance;
    oo.eqsat.dump_egraph = options_.dump_egraph;
    auto result = optimizer::OptimizeOnnx(input_, loaded->rewrites, **client, oo);
    if (!result.ok()) return Fail(result.status());
    model_ = std::move(result->model);
    model_data_ = std::move(result->model_data);
    graph_before_ = std::move(result->input_graph);
    graph_after_ = std::move(result->graph);
    input_origins_ = std::move(result->input_origins);
    report_ = optimizer::ReportToProto(result->report);
    return kContinue;
  }

  int DrawDiff() {
    if (options_.diff_svg.empty()) return kContinue;
    ModelDiffSvgOptions picture;
    picture.svg_path = options_.diff_svg;
    picture.title = absl::StrCat("taso optimize ", options_.input, " -o ", options_.output);
    picture.max_nodes = options_.diff_svg_max_nodes;
    if (!graph_after_) {
      absl::StrAppend(&picture.title, "\n(as the ONNX files have it: fused operators as ONNX spells them)");
    }
    picture.before_origins = input_origins_;
    if (report_.output_sha256() == report_.input_sha256()) picture.after_origins = input_origins_;
    auto summary = graph_after_ ? WriteGraphDiffSvg(*graph_before_, *graph_after_, picture)
                                : WriteModelDiffSvg(input_, model_, picture);
    if (!summary.ok()) return Fail(1, absl::StrCat("--diff-svg: ", summary.status().message()));
    (options_.json ? err_ : out_) << "diff picture: " << *summary << "; wrote " << options_.diff_svg << "\n";
    return kContinue;
  }

  const OptimizeCommandOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  optimizer::OptimizerOptions resolved_;  // the request resolved (CheckCommand)
  std::string input_;     // the model as read (inline for a server)
  bool external_ = false;  // the input keeps tensors in external files
  std::string input_as_read_;  // with external data: the .onnx as read, before a server's copy is inlined
  std::optional<ProgressPrinter> progress_;
  std::string model_;
  ExternalData model_data_;  // where model_'s external tensors are read from
  optimizer::Report report_;
  std::optional<Graph> graph_before_, graph_after_;  // embedded: the IR graphs, for --diff-svg
  std::vector<std::string> input_origins_;           // embedded: graph_before_'s ONNX nodes
};

}  // namespace

int RunOptimize(const OptimizeCommandOptions& options, std::ostream& out, std::ostream& err) {
  return OptimizeRun(options, out, err).Run();
}

}  // namespace taso::cli
