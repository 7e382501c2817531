// Turning timed repetitions into the statistics a Cost reports.
#ifndef TASO_COSTS_TIMING_H_
#define TASO_COSTS_TIMING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::profiler {

// How long to run a kernel. A backend runs `warmup` untimed repetitions,
// then times at least `repetitions` runs and keeps going (up to
// `max_repetitions`) until `min_timed_ms` of kernel time has accumulated, so
// microsecond kernels get enough samples for a stable median.
struct TimingOptions {
  int warmup = 8;            // TASO: 8
  int repetitions = 32;      // TASO: 32
  int max_repetitions = 2000;
  double min_timed_ms = 50;
};

// One measurement of one canonical signature.
struct Measurement {
  double mean_ms = 0;
  double stddev_ms = 0;
  double min_ms = 0;
  double median_ms = 0;
  int repetitions = 0;
  bool is_estimate = false;
  // The implementation that ran, e.g. "brgconv:avx512_core" or
  // "cudnn IMPLICIT_PRECOMP_GEMM"; for estimates, the model used.
  std::string kernel;
};

// How the graph runner treats view operators (split, transpose by strides)
// of values computed at run time.
enum class ViewPolicy {
  // Views alias their input and readers take strided parts, as in TASO: no
  // kernel runs for them.
  kAlias,
  // Each such view runs a timed copy into its own dense buffer, as ONNX
  // Runtime runs Split and Transpose (graph_runner.h lists the exceptions).
  kMaterialize,
};

// How long to time whole graphs (the graph runner). Each graph gets `warmup`
// untimed runs, then at least `runs` timed runs, more (up to `max_runs`)
// until `min_timed_ms` of its run time has accumulated. Defaults keep a small
// model's measurement well under a second.
struct GraphTimingOptions {
  int warmup = 2;
  int runs = 10;
  int max_runs = 200;
  double min_timed_ms = 20;
  ViewPolicy views = ViewPolicy::kAlias;
};

// One graph's whole-run time.
struct GraphTiming {
  double median_ms = 0;
  double min_ms = 0;
  int runs = 0;
  int opaque_skipped = 0;   // opaque operators not run (their time is not in the figures)
  int kernels = 0;          // operators run on kernels (views and load-time constants excluded)
  int reorders = 0;         // activation reorders between operators, part of the time
  int load_time_nodes = 0;  // operators computed once at load from weights (not timed)
  int views_materialized = 0;  // of `kernels`, views run as copies (ViewPolicy::kMaterialize)
  // Graphs timed together are timed in passes, each creating and running them
  // in another order (the first as given, the second reversed): the median of
  // each pass, so a comparison can take the ratio per pass and cancel the
  // bias of the order (shared/notes/measuring.md). One entry for a lone graph.
  std::vector<double> pass_median_ms;
};

// Statistics over per-repetition times in milliseconds.
Measurement Summarize(std::vector<double> samples_ms);

// How many passes a whole-graph measurement of `graphs` graphs takes: one
// for one graph; four for a comparison, the odd ones in reverse creation and
// run order (shared/notes/measuring.md: position bias). Four, not two: each
// pass creates its sessions anew, and where a session lands in memory moved
// a 1.1 ms model by several percent between passes (a NAS-RNN cell's
// candidate measured 0.990x and 1.043x in two runs of two passes each).
int GraphTimingPasses(int graphs);
// The order pass `pass` creates and runs graphs 0..n-1 in.
std::vector<int> GraphTimingOrder(int n, int pass);

// Sets each successful timing's median, min and runs from its samples over
// all passes, and its per-pass medians (samples[i][pass] for results[i]), as
// every whole-graph backend reports them.
void SummarizeGraphTimings(const std::vector<std::vector<std::vector<double>>>& samples,
                           std::vector<absl::StatusOr<GraphTiming>>& results);

// Whether a timing loop that has run `done` repetitions for `elapsed_ms`
// should stop.
bool EnoughRepetitions(const TimingOptions& options, int done, double elapsed_ms);

}  // namespace taso::profiler

#endif  // TASO_COSTS_TIMING_H_
