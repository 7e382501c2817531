// Measures the graph cost model's weight term (GraphCostModel's weight_*
// fields) on a backend: chains of [1,512] x [512,512] matmuls whose weights
// total a fraction of the last-level cache, from a quarter of it to four
// times it, each run end to end as a whole graph (MeasureGraph). Such a
// chain is what an unrolled RNN cell is, and its time per MB of weights
// shows what a graph pays once its weights no longer stay in cache: the
// weights, not the arithmetic, are the work. `taso profile memory` runs it.
//
// A plain read loop is not a substitute: on this project's AMD EPYC it slowed
// down gradually between 0.45 and 2.2 times the L3, while ONNX Runtime ran a
// model whose weights grew from 0.5 to 1.0 times the L3 0.69x as fast.
#ifndef TASO_PROFILER_WEIGHT_STREAM_PROBE_H_
#define TASO_PROFILER_WEIGHT_STREAM_PROBE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "costs/client.h"

namespace taso::profiler {

struct WeightRate {
  double fraction = 0;      // weight bytes / cache bytes
  int64_t weight_bytes = 0;
  int matmuls = 0;
  double ms_per_mb = 0;     // whole-graph median per 10^6 bytes of weights
};

struct WeightStreamFit {
  int64_t cache_bytes = 0;
  std::vector<WeightRate> rates;  // by increasing fraction
  // ms/MB with the weights in cache (the smallest fraction) and streaming
  // (the median of those >= 2); the term charges the difference, times the
  // share of it paid at each measured fraction (never decreasing with the
  // fraction; empty when streaming is no slower than cached).
  double cached_ms_per_mb = 0;
  double memory_ms_per_mb = 0;
  double weight_stream_mb_ms = 0;
  std::vector<std::pair<double, double>> spill;  // (fraction, share paid)
};

// A chain of `matmuls` [1,512] x [512,512] matmuls, each with its own weight.
Graph WeightChainGraph(int matmuls);

// The fractions the probe measures: 0.25 to 4, or to 2 where 3 and 4 times
// `cache_bytes` would pass 512 MiB of weights.
std::vector<double> DefaultWeightFractions(int64_t cache_bytes);

// Measures one chain per fraction of `cache_bytes` on `backend` through
// `client` (whole graphs, `min_runs` timed runs each) and fits the term.
// InvalidArgument for cache_bytes <= 0 or fractions without one <= 0.25 and
// one >= 2; the client's error when a graph cannot be measured.
absl::StatusOr<WeightStreamFit> ProbeWeightStreaming(ProfilerClient& client, Backend backend, int64_t cache_bytes,
                                                     const std::vector<double>& fractions, int min_runs);

// The fit alone, over measured rates (tests).
absl::StatusOr<WeightStreamFit> FitWeightStreaming(int64_t cache_bytes, std::vector<WeightRate> rates);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_WEIGHT_STREAM_PROBE_H_
