#include "profiler/analytic/analytic_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "oneapi/dnnl/dnnl.h"

namespace taso::profiler {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Public datasheet figures: FP32 on the CUDA cores (no tensor cores, no
// sparsity) and peak memory bandwidth. The launch overhead is not a
// datasheet figure: it is the usual few microseconds a kernel launch costs
// when kernels run back to back, the floor under any tiny operator.
struct TableEntry {
  const char* name;
  const char* label;
  double tflops;
  double gbytes_per_s;
  double launch_us;
};

constexpr TableEntry kDeviceTable[] = {
    {"v100", "V100 SXM2", 15.7, 900, 4},
    {"t4", "T4", 8.1, 320, 4},
    {"a100", "A100 SXM 40GB", 19.5, 1555, 4},
    {"h100", "H100 SXM", 67, 3350, 4},
};

constexpr char kCpuName[] = "cpu";
// oneDNN's per-primitive execute cost on a small tensor: a few microseconds.
constexpr double kCpuLaunchUs = 3;

AnalyticDevice FromTable(const TableEntry& e) {
  AnalyticDevice d;
  d.name = e.name;
  d.label = e.label;
  d.peak_flops = e.tflops * 1e12;
  d.bandwidth_bytes = e.gbytes_per_s * 1e9;
  d.launch_overhead_ms = e.launch_us * 1e-3;
  d.device_string = absl::StrFormat("analytic %s (%g TFLOP/s fp32, %g GB/s, %g us launch)", e.label,
                                    e.tflops, e.gbytes_per_s, e.launch_us);
  return d;
}

// "model name" from /proc/cpuinfo; a fixed fallback where there is none
// (e.g. some ARM kernels), so the device string stays stable.
std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!absl::StartsWith(line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string model(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (!model.empty()) return model;
  }
  return "unknown cpu";
}

int CpuCount() { return std::max(1u, std::thread::hardware_concurrency()); }

// Bytes read plus bytes written per second, copying with every core (as a
// multi-threaded kernel would) a buffer larger than the caches. 32 MiB each
// way: first-touch page faults cost milliseconds per MiB in a VM, so a
// bigger buffer would blow the calibration's time budget, and a 64 MiB
// working set is already twice a server part's L3 slice.
double MeasureCopyBandwidth(int threads) {
  constexpr size_t kBytes = size_t{32} << 20;
  // Written once up front, so first-touch page faults stay out of the timed
  // copies (memset, not a vector fill: this may be built unoptimised).
  std::unique_ptr<char[]> source(new char[kBytes]), destination(new char[kBytes]);
  std::memset(source.get(), 1, kBytes);
  std::memset(destination.get(), 0, kBytes);
  const size_t chunk = kBytes / threads;
  double best_seconds = std::numeric_limits<double>::infinity();
  // A copy takes about a millisecond: the best of several is cheap and
  // filters out a preempted run.
  for (int rep = 0; rep < 5; ++rep) {
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      const size_t offset = t * chunk;
      const size_t length = t == threads - 1 ? kBytes - offset : chunk;
      workers.emplace_back([&, offset, length] {
        std::memcpy(destination.get() + offset, source.get() + offset, length);
      });
    }
    for (std::thread& w : workers) w.join();
    best_seconds = std::min(best_seconds, SecondsSince(start));
  }
  return 2.0 * kBytes / best_seconds;
}

// FP32 FLOP/s of oneDNN's sgemm on square matrices big enough to be
// compute-bound; the best of a few runs within a fixed time budget.
absl::StatusOr<double> MeasureSgemmPeak() {
  constexpr dnnl_dim_t n = 1024;
  constexpr double kBudgetSeconds = 0.15;
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n, 0.0f);
  auto run = [&]() {
    return dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  // The first call spins up the thread pool and JIT-compiles the kernel.
  if (dnnl_status_t status = run(); status != dnnl_success) {
    return absl::InternalError(absl::StrCat("dnnl_sgemm failed with status ", status));
  }
  const Clock::time_point budget_start = Clock::now();
  double best_seconds = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < 3 && (rep < 1 || SecondsSince(budget_start) < kBudgetSeconds); ++rep) {
    const Clock::time_point start = Clock::now();
    if (dnnl_status_t status = run(); status != dnnl_success) {
      return absl::InternalError(absl::StrCat("dnnl_sgemm failed with status ", status));
    }
    best_seconds = std::min(best_seconds, SecondsSince(start));
  }
  return 2.0 * n * n * n / best_seconds;
}

absl::StatusOr<AnalyticDevice> CalibrateCpu() {
  const int cpus = CpuCount();
  const std::string model = CpuModelName();
  AnalyticDevice d;
  d.name = kCpuName;
  d.label = absl::StrCat(model, ", ", cpus, cpus == 1 ? " core" : " cores");
  auto peak = MeasureSgemmPeak();
  if (!peak.ok()) return peak.status();
  d.peak_flops = *peak;
  d.bandwidth_bytes = MeasureCopyBandwidth(cpus);
  d.launch_overhead_ms = kCpuLaunchUs * 1e-3;
  // No measured figures: they differ between runs, and this is a cache key.
  d.device_string = absl::StrCat("analytic cpu: ", d.label);
  return d;
}

// The cpu is calibrated once per process: the figures would not change
// between backends, and every calibration costs a few hundred milliseconds.
absl::StatusOr<AnalyticDevice> CalibratedCpu() {
  static const auto* const calibrated = new absl::StatusOr<AnalyticDevice>(CalibrateCpu());
  return *calibrated;
}

int64_t LeadingElements(const TensorType& t, int axis) {
  int64_t product = 1;
  for (int i = 0; i < axis; ++i) product *= t.dims[i];
  return product;
}

// Operators that only relabel memory: no kernel runs and no byte moves.
bool IsView(const CanonicalSignature& s) {
  const Signature& op = s.op;
  switch (op.kind) {
    case OpKind::kTranspose:
      return !op.params.shuffle;
    case OpKind::kReshape:
      return op.inputs[0].is_row_major();
    case OpKind::kSplit:
      // Parts of a row-major tensor cut along its outermost non-unit axis
      // are contiguous slices of it.
      return op.inputs[0].is_row_major() && LeadingElements(op.inputs[0], op.params.axis) == 1;
    default:
      return false;
  }
}

// SignatureFlops (which already counts a conv2d bias, one addition per
// output element) plus a fused activation, one operation per output element.
// A bias moves only its Cout floats more: fused, it costs next to nothing.
double EstimatedFlops(const CanonicalSignature& s) {
  double flops = static_cast<double>(SignatureFlops(s));
  const OpKind kind = s.op.kind;
  if ((kind == OpKind::kConv2D || kind == OpKind::kMatMul) &&
      s.op.params.activation != Activation::kNone && !s.outputs.empty()) {
    flops += static_cast<double>(s.outputs[0].num_elements());
  }
  return flops;
}

Measurement Estimate(double ms, std::string kernel) {
  Measurement m;
  m.mean_ms = m.median_ms = m.min_ms = ms;
  m.stddev_ms = 0;
  m.repetitions = 0;
  m.is_estimate = true;
  m.kernel = std::move(kernel);
  return m;
}

class AnalyticBackend : public MeasureBackend {
 public:
  explicit AnalyticBackend(AnalyticDevice device) : device_(std::move(device)) {}

  Backend kind() const override { return BACKEND_ANALYTIC; }
  const std::string& device() const override { return device_.device_string; }

  absl::StatusOr<Measurement> Measure(const CanonicalSignature& signature,
                                      const TimingOptions& /*options*/) override {
    return EstimateRoofline(device_, signature);
  }

 private:
  AnalyticDevice device_;
};

}  // namespace

std::vector<std::string> AnalyticDeviceNames() {
  std::vector<std::string> names;
  for (const TableEntry& e : kDeviceTable) names.push_back(e.name);
  names.push_back(kCpuName);
  return names;
}

absl::StatusOr<AnalyticDevice> LookupAnalyticDevice(const std::string& name) {
  const std::string key = absl::AsciiStrToLower(name);
  for (const TableEntry& e : kDeviceTable) {
    if (key == e.name) return FromTable(e);
  }
  if (key == kCpuName) return CalibratedCpu();
  return absl::InvalidArgumentError(absl::StrCat("unknown analytic device \"", name,
                                                 "\"; known devices: ",
                                                 absl::StrJoin(AnalyticDeviceNames(), ", ")));
}

absl::StatusOr<Measurement> EstimateRoofline(const AnalyticDevice& device,
                                             const CanonicalSignature& signature) {
  const std::string model = absl::StrCat("roofline: ", device.label);
  const OpKind kind = signature.op.kind;
  if (kind == OpKind::kOpaque) {
    return absl::UnimplementedError(absl::StrCat(
        "the analytic backend cannot estimate opaque operator ", signature.op.params.opaque.op_type,
        ": its work is unknown"));
  }
  // Constants are materialised once when a model is loaded, like weights.
  if (IsLoadTimeConstant(kind)) return Estimate(0, absl::StrCat(model, ", load-time constant"));
  if (IsView(signature)) return Estimate(0, absl::StrCat(model, ", view (no data moved)"));

  const double compute_s = EstimatedFlops(signature) / device.peak_flops;
  const double memory_s = static_cast<double>(SignatureBytes(signature)) / device.bandwidth_bytes;
  const bool compute_bound = compute_s > memory_s;
  const double ms = device.launch_overhead_ms + 1e3 * std::max(compute_s, memory_s);
  return Estimate(ms, absl::StrCat(model, compute_bound ? ", compute-bound" : ", memory-bound"));
}

absl::StatusOr<std::unique_ptr<MeasureBackend>> CreateAnalyticBackend(const std::string& device) {
  auto figures = LookupAnalyticDevice(device);
  if (!figures.ok()) return figures.status();
  return std::unique_ptr<MeasureBackend>(new AnalyticBackend(*std::move(figures)));
}

}  // namespace taso::profiler
