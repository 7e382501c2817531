#include "profiler/cpu/cpu_backend.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/random_inputs.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "oneapi/dnnl/dnnl_debug.h"
#include "costs/host_cpus.h"
#include "profiler/cpu/calibration.h"
#include "profiler/cpu/cpu_kernels.h"
#include "profiler/cpu/graph_runner.h"

namespace taso::profiler {
namespace {

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "unknown CPU";
}

// Inputs with values in [-1, 1]; variances in batch normalization must be
// nonnegative, or the timed kernel would chew on NaNs.
std::vector<FloatTensor> RandomInputs(const CanonicalSignature& s, uint64_t seed) {
  std::vector<FloatTensor> inputs;
  for (size_t i = 0; i < s.op.inputs.size(); ++i) {
    FloatTensor t = DeterministicFloatTensor(s.op.inputs[i], absl::StrCat("input", i), seed);
    if (s.op.kind == OpKind::kBatchNorm && i == 4) {
      for (float& v : t.data) v = std::abs(v) + 0.1f;
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

// The engine, the stream and the one thread every kernel runs from. OpenMP
// gives each calling thread its own team, so running all work from one
// thread keeps the team (and its pinning) the same for every measurement.
struct CpuBackend::State {
  dnnl::engine engine;
  dnnl::stream stream;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  bool stopping = false;
  std::thread worker;

  void Loop() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stopping || !tasks.empty(); });
        if (tasks.empty()) return;
        task = std::move(tasks.front());
        tasks.pop_front();
      }
      task();
    }
  }

  // Runs `fn` on the worker thread and waits for it.
  template <typename T>
  T RunOnWorker(std::function<T()> fn) {
    std::packaged_task<T()> task(std::move(fn));
    std::future<T> result = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu);
      tasks.push_back([&task] { task(); });
    }
    cv.notify_one();
    return result.get();
  }
};

CpuBackend::CpuBackend(std::unique_ptr<State> state, int threads, std::string device,
                       GraphCostModel graph_cost_model)
    : state_(std::move(state)),
      threads_(threads),
      device_(std::move(device)),
      graph_cost_model_(std::move(graph_cost_model)) {}

CpuBackend::~CpuBackend() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_one();
  state_->worker.join();
}

absl::StatusOr<std::unique_ptr<CpuBackend>> CpuBackend::Create(const CpuBackendOptions& options) {
  auto calibration = LoadCalibration(options.calibration);
  if (!calibration.ok()) return calibration.status();
  const std::vector<int> cpus = AllowedCpus();
  // One per physical core unless told: what ONNX Runtime uses, so both
  // backends cost the same configuration.
  const int threads = options.threads > 0 ? options.threads : RuntimeDefaultThreads();
  auto state = std::make_unique<State>();
  state->worker = std::thread([s = state.get()] { s->Loop(); });
  absl::Status setup = state->RunOnWorker<absl::Status>([&] {
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
    if (options.pin_threads) {
#pragma omp parallel num_threads(threads)
      {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[omp_get_thread_num() % cpus.size()], &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
      }
    }
    return cpu::CatchDnnl([&] {
      state->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
      state->stream = dnnl::stream(state->engine);
      return absl::OkStatus();
    });
  });
  const dnnl_version_t* v = dnnl_version();
  std::string device = absl::StrCat("cpu: ", CpuModelName(), ", ", threads, " thread", threads == 1 ? "" : "s",
                                    "; oneDNN ", v->major, ".", v->minor, ".", v->patch, " (",
                                    absl::StripPrefix(dnnl_cpu_isa2str(static_cast<dnnl_cpu_isa_t>(
                                                          dnnl::get_effective_cpu_isa())),
                                                      "cpu_isa_"),
                                    "); calibration ", calibration->calibration_id());
  std::unique_ptr<CpuBackend> backend(
      new CpuBackend(std::move(state), threads, std::move(device), std::move(*calibration)));
  if (!setup.ok()) return setup;
  return backend;
}

std::optional<std::string> CpuBackend::NoKernelFor(const CanonicalSignature& signature) const {
  // As Kernel::Build says when it refuses (cpu_kernels.cc).
  if (signature.op.kind == OpKind::kOpaque) return std::string("the cpu backend has no kernel for opaque");
  for (const TensorType& t : signature.op.inputs) {
    if (t.dtype != DType::kFloat32) return absl::StrCat("the cpu backend measures float32 tensors only, got ", t.ToString());
  }
  return std::nullopt;
}

absl::StatusOr<Measurement> CpuBackend::Measure(const CanonicalSignature& signature,
                                                const TimingOptions& options) {
  return state_->RunOnWorker<absl::StatusOr<Measurement>>([&]() -> absl::StatusOr<Measurement> {
    if (IsLoadTimeConstant(signature.op.kind)) {
      Measurement m;
      m.kernel = "load-time constant";
      return m;
    }
    auto kernel = cpu::Kernel::Build(signature, state_->engine);
    if (!kernel.ok()) return kernel.status();
    if ((*kernel)->is_view()) {
      Measurement m;
      m.kernel = "view (no kernel)";
      return m;
    }
    absl::Status loaded = (*kernel)->LoadInputs(RandomInputs(signature, 1), state_->stream);
    if (!loaded.ok()) return loaded;
    std::vector<double> samples;
    absl::Status ran = cpu::CatchDnnl([&] {
      for (int i = 0; i < options.warmup; ++i) (*kernel)->Run(state_->stream);
      double elapsed = 0;
      while (!EnoughRepetitions(options, static_cast<int>(samples.size()), elapsed)) {
        const auto start = std::chrono::steady_clock::now();
        (*kernel)->Run(state_->stream);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        samples.push_back(ms);
        elapsed += ms;
      }
      return absl::OkStatus();
    });
    if (!ran.ok()) return ran;
    Measurement m = Summarize(std::move(samples));
    m.kernel = (*kernel)->implementation();
    return m;
  });
}

absl::StatusOr<std::vector<FloatTensor>> CpuBackend::Execute(const CanonicalSignature& signature,
                                                             const std::vector<FloatTensor>& inputs) {
  using Result = absl::StatusOr<std::vector<FloatTensor>>;
  return state_->RunOnWorker<Result>([&]() -> Result {
    auto kernel = cpu::Kernel::Build(signature, state_->engine);
    if (!kernel.ok()) return kernel.status();
    absl::Status loaded = (*kernel)->LoadInputs(inputs, state_->stream);
    if (!loaded.ok()) return loaded;
    absl::Status ran = cpu::CatchDnnl([&] {
      (*kernel)->Run(state_->stream);
      return absl::OkStatus();
    });
    if (!ran.ok()) return ran;
    return (*kernel)->ReadOutputs(state_->stream);
  });
}

absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> CpuBackend::MeasureGraphs(
    const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
    const std::function<bool()>& cancelled) {
  return MeasureGraphsOnCpu(*this, graphs, options, cancelled);
}

absl::Status CpuBackend::RunOnMeasurementThread(
    const std::function<absl::Status(const dnnl::engine&, dnnl::stream&)>& fn) {
  return state_->RunOnWorker<absl::Status>([&] { return fn(state_->engine, state_->stream); });
}

}  // namespace taso::profiler
