// `taso optimize IN.onnx -o OUT.onnx`: embedded (rules, profiler and search in
// this process) or through a taso_optimizer (--server).
#ifndef TASO_CLI_OPTIMIZE_COMMAND_H_
#define TASO_CLI_OPTIMIZE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <optional>
#include <string>

#include "profiler/ort/ort_backend.h"
#include "proto/optimizer.pb.h"

namespace taso::cli {

struct OptimizeCommandOptions {
  std::string input;
  std::string extra_argument;  // a second model given: refused with the usage
  std::string output;
  std::string server;       // taso_optimizer address; empty: embedded
  // The optimizer's options, set from the flags (the one type from flag to
  // search: optimizer/optimize_options.h); sent to the server as they are.
  optimizer::OptimizeOptions request;
  // A flag that could not become an option: the message, reported (as text
  // or JSON) with exit code 2; empty when all were fine.
  std::string invalid_flag;
  std::string rules;        // embedded: RuleCollection file
  std::string store;        // embedded: taso_rules_db address to fetch proved rules from
  std::string db;           // embedded: a local database (`taso generate --db DIR`) to read proved rules from
  std::string profiler;     // embedded: taso_profiler address; empty: in-process profiler
  std::string cache_dir;    // embedded in-process profiler's cache ("" default, "none" memory)
  double measure_tolerance = 0.01;  // embedded: keep the result unless measured slower by more than this fraction
  bool json = false;
  bool quiet = false;       // no progress lines on `err`
  std::string calibration;  // embedded profiler: the cpu calibration ("" compiled in, "none", FILE)
  std::string diff_svg;     // draw what changed (IN before, OUT after) to this SVG file; "" none
  int diff_svg_max_nodes = 2000;  // nodes that picture draws at most (regions past it are counted)
  std::string dump_egraph;  // embedded eqsat: write the costed e-graph here (egraph-serialize JSON); "" none
  profiler::OrtBackendOptions ort;  // embedded profiler: the ort backend (--backend ort)
  // --threads: the embedded profiler's cpu backend runs at it too (0: one
  // per physical core); the request carries it for a --server's profiler.
  int threads = 0;
  // Embedded only (a taso_optimizer has flags of its own): unset, the
  // optimizer's defaults (EqsatOptions::ilp_memory_mb, NumericCheckOptions::max_bytes).
  std::optional<int64_t> ilp_memory_mb;
  std::optional<int64_t> max_check_mb;
  std::optional<double> max_check_gflop;  // unset: NumericCheckOptions::max_flops
  // Embedded only: the largest model read, external data included, in MiB;
  // unset, kEmbeddedMaxModelMb.
  std::optional<int64_t> max_model_mb;
};

// The embedded optimizer's default model size cap: one machine's process,
// reading external data itself, so well past the 2 GiB of one message
// (optimizing holds the weights about three times: the input, the result
// and its check).
inline constexpr int64_t kEmbeddedMaxModelMb = 8192;

// Exit codes (stable, for CI):
//   0  OUT written: an equivalent model, optimized and checked numerically
//      against the input, and not slower than it as measured end to end (or
//      unchanged when nothing cheaper was found)
//   1  internal error; or --diff-svg without Graphviz (before the search) or
//      not drawn (after OUT was written)
//   2  bad options, unreadable input, or not a valid ONNX model
//   3  a server (optimizer, profiler, rule database) is unreachable
//   4  OUT written but it is the input unchanged: the optimized graph failed
//      (or could not run) the numerical check, or could not be exported;
//      the report says why
//   5  OUT written and checked, but not measured against the input (the cost
//      backend cannot run whole graphs, --no-measure, or the measurement
//      failed: the report's measurement says which), so "not slower" is the
//      cost model's prediction
inline constexpr int kExitNotMeasured = 5;
int RunOptimize(const OptimizeCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_OPTIMIZE_COMMAND_H_
