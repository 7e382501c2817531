// taso_profiler: measures operator costs and caches them.
//   taso_profiler [--listen HOST:PORT] [--cache_dir DIR] [--backend auto|cuda|cpu|analytic|ort]
//                 [--threads N] [--calibration FILE|none] [--analytic_device v100|t4|a100|h100|cpu]
//                 [--ort_worker FILE] [--ort_threads N] [--ort_level all] [--ort_weight_mb 8] [--ort_timings 2]
//                 [--ort_timeout_s S]
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "app/startup.h"
#include "core/scratch_dir.h"
#include "costs/backend.h"
#include "net/metrics.h"
#include "net/metrics_flags.h"
#include "net/security_flags.h"
#include "net/server.h"
#include "net/server_flags.h"
#include "profiler/ort/ort_flags.h"
#include "profiler/profiler.h"
#include "profiler/profiler_service.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7072", "address to serve on; port 0 picks a free one");
ABSL_FLAG(std::string, port_file, "", "write the bound port to this file once serving");
ABSL_FLAG(std::string, cache_dir, "",
          "cost cache directory (RocksDB); default $XDG_CACHE_HOME/taso/costs or ~/.cache/taso/costs; "
          "'none' keeps costs in memory");
ABSL_FLAG(std::string, backend, "auto", "backend for requests that name none: auto (cuda if a GPU, else ort if ONNX "
          "Runtime runs here, else cpu), "
          "cuda, cpu, analytic or ort (ONNX Runtime's CPU kernels through node)");
ABSL_FLAG(int32_t, threads, 0, "cpu backend: threads oneDNN runs on (0: one per physical core this process "
          "may use); requests naming another count are refused for cpu (the ort backend takes any: --ort_threads is its own)");
ABSL_FLAG(bool, pin_threads, true, "cpu backend: pin each thread to its own core");
ABSL_FLAG(std::string, calibration, "", "cpu backend: graph cost model calibration JSON (default: the one compiled "
          "in, profiler/cpu/calibration/cpu_default.json; 'none': plain sums of kernel times)");
ABSL_FLAG(bool, cuda, true, "use the cuda backend when a GPU is present");
ABSL_FLAG(std::string, analytic_device, "cpu", "device the analytic backend models: v100, t4, a100, h100 or cpu");
ABSL_FLAG(int32_t, warmup, 8, "untimed runs before timing");
ABSL_FLAG(int32_t, repetitions, 32, "minimum timed runs per signature");
ABSL_FLAG(double, min_timed_ms, 50, "keep timing short kernels until this much kernel time is measured");
ABSL_FLAG(int32_t, graph_warmup, 2, "MeasureGraph: untimed runs of each graph before timing");
ABSL_FLAG(int32_t, graph_runs, 10, "MeasureGraph: minimum timed runs of each graph");
ABSL_FLAG(double, graph_min_timed_ms, 20, "MeasureGraph: keep timing a graph until this much run time is measured");
ABSL_FLAG(int32_t, max_graph_nodes, 20000, "MeasureGraph: largest graph accepted, in nodes (INVALID_ARGUMENT above)");
ABSL_FLAG(int64_t, max_graph_tensor_mb, 4096,
          "MeasureGraph: largest total size of a graph's tensors, in MiB (RESOURCE_EXHAUSTED above)");
ABSL_FLAG(int32_t, max_batch_signatures, taso::profiler::ProfilerOptions().max_signatures_per_request,
          "MeasureBatch: most signatures in one request (INVALID_ARGUMENT above)");
ABSL_FLAG(int64_t, max_signature_tensor_mb, taso::profiler::ProfilerOptions().max_signature_tensor_bytes >> 20,
          "MeasureBatch: largest total size of one signature's tensors, in MiB (that entry RESOURCE_EXHAUSTED above)");
ABSL_FLAG(int32_t, max_request_runs, taso::profiler::ProfilerOptions().max_request_runs,
          "most timed runs or warm-up runs a request may ask for (INVALID_ARGUMENT above)");
ABSL_FLAG(double, max_request_timed_ms, taso::profiler::ProfilerOptions().max_request_timed_ms,
          "MeasureGraph: most min_timed_ms a request may ask for (INVALID_ARGUMENT above)");
ABSL_FLAG(int32_t, drain_seconds, 50,
          "on SIGTERM: how long measurements in flight may run to completion before they are cancelled (keep it "
          "inside a Kubernetes grace period)");

int main(int argc, char** argv) {
  taso::net::BlockTerminationSignals();
  std::vector<char*> args = taso::app::ParseCommandLine(
      {"taso_profiler",
       "measures operator costs (oneDNN on CPU, cuDNN/cuBLAS on GPU, or a roofline estimate) and caches them\n"
       "  taso_profiler [--listen HOST:PORT] [--cache_dir DIR] [--backend auto|cuda|cpu|analytic|ort]"},
      argc, argv);
  if (taso::app::TooManyArguments(args)) return 2;
  taso::profiler::ProfilerOptions options;
  const std::string cache_dir = absl::GetFlag(FLAGS_cache_dir);
  options.cache_dir = taso::profiler::CacheDirFromFlag(cache_dir);
  const std::string backend = absl::GetFlag(FLAGS_backend);
  auto parsed = taso::profiler::BackendFromName(backend);
  if (!parsed) {
    std::cerr << "error: --backend must be " << taso::profiler::BackendChoices() << ", got '" << backend << "'\n";
    return 2;
  }
  auto ort = taso::profiler::OrtBackendOptionsFromFlags();
  if (!ort.ok()) {
    std::cerr << "error: " << ort.status().message() << "\n";
    return 2;
  }
  options.ort = *ort;
  options.default_backend = *parsed;
  options.cpu.threads = absl::GetFlag(FLAGS_threads);
  options.cpu.pin_threads = absl::GetFlag(FLAGS_pin_threads);
  options.cpu.calibration = absl::GetFlag(FLAGS_calibration);
  options.enable_cuda = absl::GetFlag(FLAGS_cuda);
  options.analytic_device = absl::GetFlag(FLAGS_analytic_device);
  options.timing.warmup = absl::GetFlag(FLAGS_warmup);
  options.timing.repetitions = absl::GetFlag(FLAGS_repetitions);
  options.timing.min_timed_ms = absl::GetFlag(FLAGS_min_timed_ms);
  options.graph_timing.warmup = absl::GetFlag(FLAGS_graph_warmup);
  options.graph_timing.runs = absl::GetFlag(FLAGS_graph_runs);
  options.graph_timing.min_timed_ms = absl::GetFlag(FLAGS_graph_min_timed_ms);
  options.graph_timing.max_runs = std::max(options.graph_timing.max_runs, options.graph_timing.runs);
  options.max_graph_nodes = absl::GetFlag(FLAGS_max_graph_nodes);
  options.max_graph_tensor_bytes = absl::GetFlag(FLAGS_max_graph_tensor_mb) << 20;
  options.max_signatures_per_request = absl::GetFlag(FLAGS_max_batch_signatures);
  options.max_signature_tensor_bytes = absl::GetFlag(FLAGS_max_signature_tensor_mb) << 20;
  options.max_request_runs = absl::GetFlag(FLAGS_max_request_runs);
  options.max_request_timed_ms = absl::GetFlag(FLAGS_max_request_timed_ms);
  if (options.max_request_runs < 1 || !(options.max_request_timed_ms > 0)) {
    return taso::app::Error("--max_request_runs must be >= 1 and --max_request_timed_ms > 0", 2);
  }
  if (options.timing.warmup < 0 || options.timing.repetitions < 1 || options.cpu.threads < 0 ||
      options.graph_timing.warmup < 0 || options.graph_timing.runs < 1 || options.max_graph_nodes < 1 ||
      options.max_graph_tensor_bytes < 1 || options.max_signatures_per_request < 1 ||
      options.max_signature_tensor_bytes < 1 || absl::GetFlag(FLAGS_drain_seconds) < 0) {
    std::cerr << "error: --warmup, --graph_warmup, --threads and --drain_seconds must be >= 0; --repetitions, "
                 "--graph_runs, --max_graph_nodes, --max_graph_tensor_mb, --max_batch_signatures and "
                 "--max_signature_tensor_mb >= 1\n";
    return 2;
  }
  auto profiler = taso::profiler::CostProfiler::Create(options);
  if (!profiler.ok()) {  // a calibration file that does not load is a bad option (2)
    return taso::app::Error(profiler.status().message(),
                            profiler.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1);
  }
  auto resolved = (*profiler)->ResolveBackend(taso::profiler::BACKEND_UNSPECIFIED);
  if (!resolved.ok()) return taso::app::Error(resolved.status().message(), 1);
  std::cerr << "taso_profiler: cache " << (options.cache_dir.empty() ? "in memory" : options.cache_dir)
            << "; default backend " << taso::profiler::BackendName((*resolved)->kind()) << "\n"
            << (*profiler)->DescribeBackends();
  taso::profiler::ProfilerService service(profiler->get());
  taso::net::ServerOptions server_options;
  server_options.listen = absl::GetFlag(FLAGS_listen);
  server_options.port_file = absl::GetFlag(FLAGS_port_file);
  server_options.name = "taso_profiler";
  // A measurement runs for seconds (a batch of signatures, or a graph timed
  // until --graph_min_timed_ms), longer than a server's default drain.
  server_options.drain_seconds = absl::GetFlag(FLAGS_drain_seconds);
  server_options.security = taso::net::ServerSecurityFromFlags();
  server_options.security.make_private_dir = &taso::MakePrivateTempDir;  // a killed server's key copies go too
  // The profiler's own counters, read at every scrape.
  taso::net::MetricsRegistry metrics;
  const taso::profiler::CostProfiler* counted = profiler->get();
  struct Exported {
    const char* name;
    const char* help;
    int64_t taso::profiler::ProfilerCounters::*field;
  };
  for (const Exported& e : std::vector<Exported>{
           {"taso_profiler_signatures_total", "Operator signatures asked for", &taso::profiler::ProfilerCounters::requests},
           {"taso_profiler_cache_hits_total", "Signatures answered from the cost cache",
            &taso::profiler::ProfilerCounters::cache_hits},
           {"taso_profiler_cache_misses_total", "Signatures not in the cache (measured by this request)",
            &taso::profiler::ProfilerCounters::cache_misses},
           {"taso_profiler_shared_total", "Signatures that waited for another request's measurement",
            &taso::profiler::ProfilerCounters::shared},
           {"taso_profiler_measurements_total", "Kernels actually timed or estimated",
            &taso::profiler::ProfilerCounters::measurements},
           {"taso_profiler_errors_total", "Signatures answered with an error", &taso::profiler::ProfilerCounters::errors},
       }) {
    auto field = e.field;
    metrics.AddCallback(e.name, e.help, taso::net::MetricType::kCounter,
                        [counted, field] { return static_cast<double>(counted->counters().*field); });
  }
  server_options.metrics = &metrics;
  taso::net::ApplyMetricsFlags(&server_options);
  taso::net::ApplyServerFlags(&server_options);
  absl::Status s = taso::net::RunServer(server_options, {&service});
  return s.ok() ? 0 : taso::app::Error(s.message(), 1);
}
