// An analytic backend: a roofline estimate of an operator's run time from
// its FLOPs and bytes moved, for planning without the hardware at hand.
//
//   time_ms = launch_overhead + max(flops / peak_flops, bytes / bandwidth)
//
// Every Measurement it returns is marked is_estimate. Views (a transpose
// that only permutes strides, a reshape of a row-major tensor, a split into
// contiguous chunks) move no data and launch nothing: they cost 0 ms.
#ifndef TASO_PROFILER_ANALYTIC_ANALYTIC_BACKEND_H_
#define TASO_PROFILER_ANALYTIC_ANALYTIC_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costs/backend.h"

namespace taso::profiler {

// The figures the roofline needs for one device.
struct AnalyticDevice {
  std::string name;            // table key: "h100", "cpu", ...
  std::string label;           // human name in kernel strings: "H100 SXM"
  double peak_flops = 0;       // FP32 FLOP/s, no tensor cores
  double bandwidth_bytes = 0;  // memory bytes/s (reads plus writes)
  double launch_overhead_ms = 0;
  // Stable across processes on one machine; part of cache keys. For the
  // calibrated cpu it omits the measured figures, which vary run to run.
  std::string device_string;
};

// Known device names, in table order ("v100", "t4", "a100", "h100", "cpu").
std::vector<std::string> AnalyticDeviceNames();

// The figures for a named device. "cpu" is this machine, calibrated by two
// microbenchmarks (memory copy and oneDNN sgemm, well under a second).
// Unknown name: InvalidArgumentError listing the known names.
absl::StatusOr<AnalyticDevice> LookupAnalyticDevice(const std::string& name);

// The roofline estimate of one canonical signature on `device`.
// UnimplementedError for opaque operators (their work is unknown).
absl::StatusOr<Measurement> EstimateRoofline(const AnalyticDevice& device,
                                             const CanonicalSignature& signature);

// A MeasureBackend (kind BACKEND_ANALYTIC) that answers with estimates.
absl::StatusOr<std::unique_ptr<MeasureBackend>> CreateAnalyticBackend(
    const std::string& device = "cpu");

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ANALYTIC_ANALYTIC_BACKEND_H_
