// What bench/calibrate.sh fits the cpu graph cost model to: for each ONNX
// model, its runtime baseline (optimizer/passes/runtime_baseline.h, what ONNX Runtime
// runs after its own fusions) measured operator by operator on the profiler,
// with the two features the model adds to the kernel sum: operators that run
// a kernel, and the MB they write. One JSON object per model on stdout.
//   calibration_features [--cache_dir DIR|none] [--threads N] [--calibration FILE|none] MODEL.onnx...
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "app/startup.h"
#include "nlohmann/json.hpp"
#include "optimizer/passes/cost_model.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/passes/runtime_baseline.h"
#include "costs/graph_cost.h"
#include "profiler/open_client.h"

ABSL_FLAG(std::string, cache_dir, "", "cost cache directory (default ~/.cache/taso/costs; 'none': memory only)");
ABSL_FLAG(int32_t, threads, 1, "cpu backend threads (match the ONNX Runtime runs being fitted)");
ABSL_FLAG(std::string, calibration, "", "cpu calibration (only names the device: the features do not depend on it)");

int main(int argc, char** argv) {
  std::vector<char*> args = taso::app::ParseCommandLine(
      {"calibration_features", "per-model features for the graph cost model fit (bench/calibrate.sh)\n"
                               "  calibration_features [--threads N] [--cache_dir DIR] MODEL.onnx..."},
      argc, argv);
  if (args.size() < 2) return taso::app::Error("give one or more ONNX models", 2);
  taso::profiler::ProfilerOptions options;
  options.enable_cuda = false;
  options.default_backend = taso::profiler::BACKEND_CPU;
  options.cache_dir = taso::profiler::CacheDirFromFlag(absl::GetFlag(FLAGS_cache_dir));
  options.cpu.threads = absl::GetFlag(FLAGS_threads);
  options.cpu.calibration = absl::GetFlag(FLAGS_calibration);
  // The fit is of oneDNN kernel sums: operators without a oneDNN kernel stay
  // unmeasured, and their models out of the fit (calibrate_fit.js), rather
  // than costed in ONNX Runtime.
  options.cpu_gaps_in_ort = false;
  auto client = taso::profiler::OpenProfiler("", options);
  if (!client.ok()) return taso::app::Error(client.status().message(), 1);
  int failed = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string path = args[i];
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    auto model = taso::ImportOnnx(bytes.str());
    if (!in || !model.ok()) {
      std::cerr << "calibration_features: " << path << ": "
                << (in ? model.status().message() : "cannot read") << "\n";
      ++failed;
      continue;
    }
    taso::optimizer::CostModel cost(client->get(), taso::profiler::BACKEND_CPU);
    auto baseline = taso::optimizer::RuntimeBaseline(model->graph, cost);
    if (!baseline.ok()) return taso::app::Error(baseline.status().message(), 1);
    auto measured = taso::profiler::MeasureGraph(baseline->graph, **client, taso::profiler::BACKEND_CPU);
    if (!measured.ok()) return taso::app::Error(measured.status().message(), 1);
    const nlohmann::json line = {
        {"model", path},
        {"operators", measured->operators},
        {"kernel_operators", measured->kernel_operators},
        {"output_mb", measured->output_mb},
        {"kernel_ms", measured->total_ms},
        {"modelled_ms", measured->modelled_ms},
        {"unmeasured", measured->unmeasured},
        {"device", measured->distinct.empty() ? "" : measured->distinct[0].cost.device()},
    };
    std::cout << line.dump() << std::endl;
  }
  return failed > 0 ? 1 : 0;
}
