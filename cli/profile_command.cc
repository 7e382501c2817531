#include "cli/profile_command.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "costs/backend.h"
#include "models/resnet50.h"
#include "onnx_io/onnx_import.h"
#include "core/graph_proto.h"
#include "core/json_text.h"
#include "google/protobuf/util/json_util.h"
#include "profiler/open_client.h"
#include "costs/graph_cost.h"
#include "profiler/cpu/cache_size.h"
#include "profiler/weight_stream_probe.h"
#include "costs/signature_text.h"

namespace taso::cli {
namespace {

using profiler::Backend;

std::string ToJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &json, o);
  return json;
}

// The canonical key of a stored signature, for display.
std::string KeyOf(const profiler::OpSignature& proto) {
  auto sig = profiler::SignatureFromProto(proto);
  if (!sig.ok()) return "(unreadable signature)";
  auto canonical = profiler::Canonicalize(*sig);
  return canonical.ok() ? canonical->key : "(invalid signature)";
}

std::string CostLine(const profiler::Cost& c) {
  if (c.repetitions() == 0 && !c.is_estimate()) return absl::StrFormat("0 ms (%s)", c.kernel());
  return absl::StrFormat("%.4f ms median%s, mean %.4f +- %.4f, %d runs, %s%s", c.median_ms(),
                         c.is_estimate() ? " (ESTIMATE)" : "", c.mean_ms(), c.stddev_ms(), c.repetitions(),
                         c.kernel(), c.from_cache() ? ", cached" : "");
}

class Profile {
 public:
  Profile(const ProfileOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int Run() {
    const std::string& c = options_.subcommand;
    auto backend = profiler::BackendFromName(options_.backend);
    if (!backend) return Fail(2, absl::StrCat("--backend must be ", profiler::BackendChoices(), ", got '", options_.backend, "'"));
    backend_ = *backend;
    if (c != "measure" && c != "graph" && c != "backends" && c != "cache" && c != "memory") {
      return Fail(2, absl::StrCat("unknown subcommand '", c, "': use measure, graph, backends, cache or memory"));
    }
    if (c == "measure") {
      // Signatures are checked before anything is started or contacted.
      if (options_.args.empty()) return Fail(2, "give one or more signatures, e.g. 'relu(f32[1,64,56,56])'");
      for (const std::string& text : options_.args) {
        auto sig = profiler::ParseSignature(text);
        if (!sig.ok()) return Fail(sig.status());
        *measure_.add_signatures() = profiler::SignatureToProto(*sig);
      }
    }
    if (int code = Connect(); code != 0) return code;
    if (c == "measure") return Measure();
    if (c == "graph") return GraphCost();
    if (c == "backends") return Backends();
    if (c == "memory") return Memory();
    return Cache();
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso profile " << options_.subcommand << ": " << message << "\n";
    return code;
  }
  int Fail(const absl::Status& s) {
    const bool unreachable = s.code() == absl::StatusCode::kUnavailable ||
                             s.code() == absl::StatusCode::kFailedPrecondition;
    return Fail(unreachable ? 3 : s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1, std::string(s.message()));
  }

  int Connect() {
    profiler::ProfilerOptions embedded;
    embedded.cache_dir = profiler::CacheDirFromFlag(options_.cache_dir);
    embedded.cpu.threads = options_.cpu_threads;
    embedded.cpu.calibration = options_.calibration;
    embedded.ort = options_.ort;
    embedded.analytic_device = options_.analytic_device;
    auto client = profiler::OpenProfiler(options_.server, embedded, &embedded_);
    if (!client.ok()) return Fail(client.status());
    client_ = std::move(*client);
    return 0;
  }

  int Measure() {
    profiler::MeasureRequest request = measure_;
    request.set_backend(backend_);
    request.set_threads(options_.threads);
    request.set_bypass_cache(options_.bypass_cache);
    request.set_min_repetitions(options_.repetitions);
    auto response = client_->MeasureBatch(request);
    if (!response.ok()) return Fail(response.status());
    int failed = 0;
    for (int i = 0; i < response->results_size(); ++i) {
      const profiler::MeasureResult& r = response->results(i);
      failed += r.has_error();
      if (options_.json) {
        // The result is the proto's own JSON, spliced in as printed.
        out_ << "{\"signature\":" << Json(options_.args[i]).dump() << ",\"result\":" << ToJson(r) << "}\n";
      } else if (r.has_cost()) {
        out_ << options_.args[i] << "\n  " << CostLine(r.cost()) << "\n  on " << r.cost().device() << "\n";
      } else {
        out_ << options_.args[i] << "\n  error: " << r.error().message() << "\n";
      }
    }
    return failed > 0 ? 4 : 0;
  }

  // `graph` run end to end (--measure), with --views copy or alias.
  absl::StatusOr<profiler::GraphMeasurement> MeasureWholeGraph(const Graph& graph) {
    profiler::MeasureGraphRequest request;
    request.set_views(options_.views == "copy" ? profiler::GRAPH_VIEW_POLICY_MATERIALIZE
                                               : profiler::GRAPH_VIEW_POLICY_ALIAS);
    *request.add_graphs() = GraphToProto(graph, /*weight_data=*/false);
    request.set_backend(backend_);
    request.set_threads(options_.threads);
    request.set_bypass_cache(options_.bypass_cache);
    request.set_min_runs(options_.repetitions);  // 0: the profiler's default
    auto response = client_->MeasureGraph(request);
    if (!response.ok()) return response.status();
    const profiler::GraphMeasureResult& r = response->results(0);
    if (r.has_error()) {
      return absl::Status(static_cast<absl::StatusCode>(r.error().code()),
                          absl::StrCat("measuring the whole graph: ", r.error().message()));
    }
    return r.measurement();
  }

  int GraphCost() {
    if (options_.args.size() != 1) return Fail(2, "give one graph: a taso.ir.Graph text-proto FILE or resnet50");
    absl::StatusOr<Graph> graph;
    const std::string& name = options_.args[0];
    if (name == "resnet50") {
      graph = models::BuildResNet50();
    } else if (absl::EndsWith(name, ".onnx")) {
      auto model = ImportOnnxFile(name);  // with its external data
      if (!model.ok()) return Fail(model.status());
      graph = std::move(model->graph);
    } else {
      std::ifstream in(name);
      if (!in) return Fail(2, absl::StrCat("cannot read ", name));
      std::stringstream text;
      text << in.rdbuf();
      graph = GraphFromText(text.str());
    }
    if (!graph.ok()) return Fail(graph.status());
    auto report = profiler::MeasureGraph(*graph, *client_, backend_, options_.bypass_cache, options_.threads);
    if (!report.ok()) return Fail(report.status());
    int cached = 0;
    for (const auto& op : report->distinct) cached += op.cost.from_cache();
    std::optional<profiler::GraphMeasurement> measured;
    if (options_.measure) {
      if (options_.views != "copy" && options_.views != "alias") {
        return Fail(2, absl::StrCat("--views must be copy or alias, got '", options_.views, "'"));
      }
      auto whole = MeasureWholeGraph(*graph);
      if (!whole.ok()) return Fail(whole.status());
      measured = *std::move(whole);
    }
    if (options_.json) {
      const Json summary = {{"graph", name},
                            {"operators", report->operators},
                            {"distinct", report->distinct.size()},
                            {"from_cache", cached},
                            {"unmeasured", report->unmeasured},
                            {"measured_elsewhere", report->delegated},
                            {"total_ms", RoundTo(report->total_ms, 6)},
                            {"modelled_ms", RoundTo(report->modelled_ms, 6)},
                            {"kernel_operators", report->kernel_operators},
                            {"output_mb", RoundTo(report->output_mb, 6)},
                            {"weight_mb", RoundTo(report->weight_mb, 6)},
                            {"weight_stream_ms", RoundTo(report->weight_stream_ms, 6)},
                            {"cost_model", profiler::DescribeGraphCostModel(report->model)},
                            {"estimate", report->any_estimate},
                            {"request_ms", RoundTo(report->request_ms, 3)},
                            {"via", client_->Describe()}};
      Json line = summary;
      if (measured) {
        line["measured_ms"] = RoundTo(measured->median_ms(), 6);
        line["measured_min_ms"] = RoundTo(measured->min_ms(), 6);
        line["measured_runs"] = measured->runs();
        line["measured_from_cache"] = measured->from_cache();
        line["measured_operator_sum_ms"] = RoundTo(measured->operator_sum_ms(), 6);
        line["opaque_skipped"] = measured->opaque_skipped();
        line["kernels"] = measured->kernels();
        line["reorders"] = measured->reorders();
        line["views"] = options_.views;
        line["views_materialized"] = measured->views_materialized();
        line["measured_device"] = measured->device();
      }
      out_ << line.dump() << "\n";  // compact, as the proto JSON beside it
    } else {
      for (const auto& op : report->distinct) {
        out_ << absl::StrFormat("%4dx %s\n      %s\n", op.count, op.key,
                                op.error.empty() ? CostLine(op.cost) : "error: " + op.error);
      }
      out_ << absl::StrFormat("%s: %d operators, %d distinct (%d from cache); sum of operator times %.3f ms%s%s\n", name,
                              report->operators, report->distinct.size(), cached, report->total_ms,
                              report->any_estimate ? " (ESTIMATE)" : "",
                              report->unmeasured ? absl::StrCat(", ", report->unmeasured, " operators unmeasured")
                                                 : "");
      if (report->delegated > 0) {
        out_ << absl::StrFormat("%d operators (%.3f ms of the sum) measured by another backend for this one (the "
                                "cpu backend's opaque operators, in ONNX Runtime)\n",
                                report->delegated, report->delegated_ms);
      }
      out_ << absl::StrFormat("modelled graph time %.3f ms: %d operators running kernels, %.2f MB written, "
                              "%.2f MB of weights read (%.3f ms streaming them); %s\n",
                              report->modelled_ms, report->kernel_operators, report->output_mb, report->weight_mb,
                              report->weight_stream_ms, profiler::DescribeGraphCostModel(report->model));
      out_ << absl::StrFormat("MeasureBatch via %s took %.1f ms\n", client_->Describe(), report->request_ms);
      if (measured) {
        out_ << absl::StrFormat(
            "measured whole graph: %.3f ms median (min %.3f, %d runs%s) vs %.3f ms per-operator sum (%.2fx); "
            "%d kernels (%d of them views run as copies, --views %s), %d activation reorders, %d computed at load\n",
            measured->median_ms(), measured->min_ms(), measured->runs(), measured->from_cache() ? ", cached" : "",
            measured->operator_sum_ms(),
            measured->operator_sum_ms() > 0 ? measured->median_ms() / measured->operator_sum_ms() : 0.0,
            measured->kernels(), measured->views_materialized(), options_.views, measured->reorders(),
            measured->load_time_nodes());
        if (measured->opaque_skipped() > 0) {
          out_ << absl::StrFormat("  %d opaque operators were not run: neither time includes them\n",
                                  measured->opaque_skipped());
        }
        out_ << "  on " << measured->device() << "\n";
      }
    }
    // 4 also when the whole-graph runner skipped operators (opaque ones on
    // the cpu runner, even where ONNX Runtime costed them one by one): its
    // time is not the graph's (bench/suite.sh reads it so).
    return report->unmeasured > 0 || (measured && measured->opaque_skipped() > 0) ? 4 : 0;
  }

  // Chains of matmuls whose weights grow past the last-level cache, each
  // run as a whole graph on the backend (weight_stream_probe.h); prints the
  // weight term's fit as calibration keys.
  int Memory() {
    if (!options_.args.empty()) return Fail(2, "memory takes no arguments");
    // The cache size is read here, so the graphs must run here too.
    if (embedded_ == nullptr) return Fail(2, "memory measures this machine: run it without --server");
    const int64_t cache = profiler::LastLevelCacheBytes();
    auto fit = profiler::ProbeWeightStreaming(*client_, backend_, cache, profiler::DefaultWeightFractions(cache),
                                              options_.repetitions > 0 ? options_.repetitions : 20);
    if (!fit.ok()) return Fail(fit.status());
    Json spill = Json::array();
    for (const auto& [fraction, paid] : fit->spill) spill.push_back({RoundTo(fraction, 4), RoundTo(paid, 3)});
    // The calibration key this backend's term is read from (calibration.h).
    const std::string key = backend_ == profiler::BACKEND_ORT_CPU ? "ort_weights" : "weights";
    const Json keys = {{key, {{"stream_mb_ms", RoundTo(fit->weight_stream_mb_ms, 5)}, {"spill", spill}}}};
    if (options_.json) {
      Json rates = Json::array();
      for (const auto& r : fit->rates) {
        rates.push_back({{"fraction", RoundTo(r.fraction, 4)}, {"weight_bytes", r.weight_bytes},
                         {"matmuls", r.matmuls}, {"ms_per_mb", RoundTo(r.ms_per_mb, 6)}});
      }
      out_ << Json{{"cache_bytes", cache},
                   {"via", client_->Describe()},
                   {"cached_ms_per_mb", RoundTo(fit->cached_ms_per_mb, 6)},
                   {"memory_ms_per_mb", RoundTo(fit->memory_ms_per_mb, 6)},
                   {"rates", rates},
                   {"calibration_keys", keys}}
                  .dump()
           << "\n";
      return 0;
    }
    out_ << absl::StrFormat("last-level cache %.1f MiB (sysfs); chains of [1,512]x[512,512] matmuls, whole graphs:\n",
                            static_cast<double>(cache) / (1 << 20));
    for (const auto& r : fit->rates) {
      out_ << absl::StrFormat("  %5.3f x cache: %3d matmuls, %7.2f MB of weights, %.4f ms/MB\n", r.fraction,
                              r.matmuls, static_cast<double>(r.weight_bytes) / 1e6, r.ms_per_mb);
    }
    out_ << absl::StrFormat("cached %.4f ms/MB, streaming %.4f ms/MB; calibration key: %s\n  via %s\n",
                            fit->cached_ms_per_mb, fit->memory_ms_per_mb, keys.dump(), client_->Describe());
    return 0;
  }

  int Backends() {
    if (embedded_ == nullptr) return Fail(2, "backends describes this machine: run it without --server");
    out_ << embedded_->DescribeBackends();
    return 0;
  }

  int Cache() {
    if (options_.args.empty()) return Fail(2, "give list, export or invalidate");
    const std::string what = options_.args[0];
    if (what == "invalidate") return Invalidate();
    if (what != "list" && what != "export") return Fail(2, absl::StrCat("unknown cache command '", what, "'"));
    if (what == "export" && options_.format != "json" && options_.format != "proto") {
      return Fail(2, absl::StrCat("unknown --format '", options_.format, "': use json or proto"));
    }
    if (what == "export" && options_.format == "proto" && options_.output.empty()) {
      return Fail(2, "--format proto writes binary: give -o FILE");
    }
    std::vector<ir::OpKind> kinds;
    for (const std::string& op : options_.ops) {
      auto kind = OpKindFromName(op);
      if (!kind) return Fail(2, absl::StrCat("unknown operator '", op, "'"));
      kinds.push_back(static_cast<ir::OpKind>(*kind));
    }
    if (kinds.empty()) kinds.push_back(ir::OP_UNSPECIFIED);
    profiler::ListCacheResponse all;
    for (ir::OpKind kind : kinds) {
      profiler::ListCacheRequest request;
      request.set_backend(backend_);
      request.set_device(options_.device);
      request.set_kind(kind);
      request.set_page_size(1000);
      while (true) {
        auto page = client_->ListCache(request);
        if (!page.ok()) return Fail(page.status());
        for (auto& e : *page->mutable_entries()) *all.add_entries() = std::move(e);
        if (page->next_page_token().empty()) break;
        request.set_page_token(page->next_page_token());
      }
    }
    std::ofstream file;
    std::ostream* sink = &out_;
    if (!options_.output.empty()) {
      file.open(options_.output, std::ios::binary);
      if (!file) return Fail(1, absl::StrCat("cannot write ", options_.output));
      sink = &file;
    }
    if (what == "export" && options_.format == "proto") {
      if (!all.SerializeToOstream(sink)) return Fail(1, absl::StrCat("writing ", options_.output, " failed"));
    } else if (what == "export" || options_.json) {
      for (const auto& e : all.entries()) *sink << ToJson(e) << "\n";
    } else {
      for (const auto& e : all.entries()) {
        *sink << KeyOf(e.signature()) << "\n  " << profiler::BackendName(e.cost().backend()) << " "
              << CostLine(e.cost()) << "\n  on " << e.cost().device() << "\n";
      }
      *sink << all.entries_size() << " entries\n";
    }
    if (file.is_open()) {
      file.close();  // a full disk shows here, when the buffer is written
      if (!file) return Fail(1, absl::StrCat("cannot write ", options_.output, ": ", std::strerror(errno)));
    }
    if (what == "export" && !options_.output.empty()) {
      err_ << "taso profile cache export: " << all.entries_size() << " entries written to " << options_.output << "\n";
    }
    return 0;
  }

  int Invalidate() {
    profiler::InvalidateCacheRequest request;
    for (size_t i = 1; i < options_.args.size(); ++i) {
      auto sig = profiler::ParseSignature(options_.args[i]);
      if (!sig.ok()) return Fail(sig.status());
      *request.add_signatures() = profiler::SignatureToProto(*sig);
    }
    if (request.signatures_size() == 0 && !options_.all) {
      return Fail(2, "name signatures to drop, or --all (with --device/--backend to limit it)");
    }
    request.set_all(options_.all);
    request.set_backend(backend_);
    request.set_device(options_.device);
    auto response = client_->InvalidateCache(request);
    if (!response.ok()) return Fail(response.status());
    out_ << response->removed() << " entries removed\n";
    return 0;
  }

  const ProfileOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  Backend backend_ = profiler::BACKEND_UNSPECIFIED;
  std::unique_ptr<profiler::ProfilerClient> client_;
  profiler::CostProfiler* embedded_ = nullptr;
  profiler::MeasureRequest measure_;  // measure: the parsed signatures
};

}  // namespace

int RunProfile(const ProfileOptions& options, std::ostream& out, std::ostream& err) {
  return Profile(options, out, err).Run();
}

}  // namespace taso::cli
