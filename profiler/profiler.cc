#include "profiler/profiler.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "core/canonical.h"
#include "core/graph_proto.h"
#include "costs/backend.h"
#include "profiler/analytic/analytic_backend.h"
#include "profiler/cpu/calibration.h"
#include "costs/graph_cost.h"
#include "costs/graph_cost_model.h"
#include "costs/host_cpus.h"
#include "profiler/cuda/cuda_backend.h"
#include "storage/rocks_status.h"

namespace taso::profiler {

// One measurement in progress; requests for the same key share it.
struct CostProfiler::Flight {
  // What the request measuring it needs to time it again and store it; set
  // before the flight is published.
  std::string key;
  CacheKey cache_key;
  CanonicalSignature sig;
  MeasureBackend* backend = nullptr;
  TimingOptions timing;
  // Guarded by mu_. Another request takes the first figure as soon as it is
  // ready and the final one at the end of its own request, so no request
  // waits on a flight while holding one that is not yet final.
  std::condition_variable cv;
  bool first_ready = false;  // `result` holds the first timing's figure
  bool done = false;         // `result` is final: cached, and the flight left flights_
  absl::StatusOr<Cost> result = absl::UnknownError("measurement did not finish");
};

namespace {

MeasureResult ErrorResult(const absl::Status& status) {
  MeasureResult r;
  r.mutable_error()->set_code(static_cast<int>(status.code()));
  r.mutable_error()->set_message(std::string(status.message()));
  return r;
}

Cost ToCost(const Measurement& m, const MeasureBackend& backend) {
  Cost c;
  c.set_mean_ms(m.mean_ms);
  c.set_stddev_ms(m.stddev_ms);
  c.set_min_ms(m.min_ms);
  c.set_median_ms(m.median_ms);
  c.set_repetitions(m.repetitions);
  c.set_backend(backend.kind());
  c.set_device(backend.device());
  c.set_is_estimate(m.is_estimate || backend.kind() == BACKEND_ANALYTIC);
  c.set_kernel(m.kernel);
  storage::SetTime(absl::Now(), c.mutable_measured_at());
  return c;
}

// Whether an ort worker's failure to start is of this attempt (it died or
// hung while loading, the machine was out of processes or memory for a
// moment) rather than of the installation (node, the worker or
// onnxruntime-node missing: FAILED_PRECONDITION) or the options.
bool FailedToStartThisTime(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

// "the faster of 6.0000 and 4.0000 ms, timed apart": the figures an
// operator's cost was chosen from.
std::string TimedApartNote(const std::vector<double>& timed_ms) {
  if (timed_ms.size() == 2) {
    return absl::StrFormat("the faster of %.4f and %.4f ms, timed apart", timed_ms[0], timed_ms[1]);
  }
  std::string figures;
  for (double ms : timed_ms) absl::StrAppend(&figures, figures.empty() ? "" : ", ", absl::StrFormat("%.4f", ms));
  return absl::StrCat("the fastest of ", figures, " ms, timed apart");
}

}  // namespace

// Request threads log concurrently: one write per line keeps lines whole.
void CostProfiler::WarnCacheNotStored(const absl::Status& stored) {
  std::fprintf(stderr, "taso_profiler: warning: %s\n", std::string(stored.message()).c_str());
}

// What one MeasureBatch owes its flights: the later timings of those it
// started, and the final figures of every answer given before them.
class CostProfiler::RequestFlights {
 public:
  explicit RequestFlights(CostProfiler& profiler) : profiler_(profiler) {}
  // A request that stops early ends its flights with the figures it has, so
  // that no other request waits for them forever.
  ~RequestFlights() {
    for (Started& s : started_) profiler_.EndFlight(*s.flight, s.best);
  }

  // The result MeasureOne is answering (MeasureBatch sets it).
  int index = 0;

  void Start(std::shared_ptr<Flight> flight, const Cost& first) {
    started_.push_back({flight, first, {first.median_ms()}});
  }
  void AnsweredEarly(std::shared_ptr<Flight> flight, const std::string& kernel_prefix) {
    early_.push_back({index, std::move(flight), kernel_prefix});
  }

  // Times each started flight again, as many times as its backend asks,
  // last first so that an operator's timings are as far apart as the request
  // allows; ends the flights with the fastest figures; then waits for the
  // final figures of what was answered early and puts them in `response`.
  void Finish(const std::function<bool()>& cancelled, MeasureResponse& response) {
    int most = 1;
    for (const Started& s : started_) most = std::max(most, s.flight->backend->timings_per_operator());
    for (int pass = 1; pass < most && !(cancelled && cancelled()); ++pass) {
      for (auto s = started_.rbegin(); s != started_.rend(); ++s) {
        if (pass >= s->flight->backend->timings_per_operator()) continue;
        if (cancelled && cancelled()) break;
        profiler_.TimeAgain(*s->flight, s->best, s->timed_ms);
      }
    }
    for (Started& s : started_) {
      if (s.timed_ms.size() > 1) s.best.set_kernel(absl::StrCat(s.best.kernel(), "; ", TimedApartNote(s.timed_ms)));
      profiler_.EndFlight(*s.flight, s.best);
    }
    started_.clear();
    for (const Early& e : early_) {
      absl::StatusOr<Cost> final_cost = profiler_.FinalFigure(*e.flight);
      MeasureResult& result = *response.mutable_results(e.index);
      if (!final_cost.ok()) {
        result = ErrorResult(final_cost.status());
        continue;
      }
      *result.mutable_cost() = *std::move(final_cost);
      result.mutable_cost()->set_kernel(absl::StrCat(e.kernel_prefix, result.cost().kernel()));
    }
    early_.clear();
  }

 private:
  struct Started {
    std::shared_ptr<Flight> flight;
    Cost best;
    std::vector<double> timed_ms;
  };
  struct Early {
    int index;
    std::shared_ptr<Flight> flight;
    std::string kernel_prefix;
  };
  CostProfiler& profiler_;
  std::vector<Started> started_;
  std::vector<Early> early_;
};

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/taso/costs";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/taso/costs";
  return "taso-costs";
}

std::string CacheDirFromFlag(const std::string& flag) {
  if (flag == "none") return "";
  return flag.empty() ? DefaultCacheDir() : flag;
}

CostProfiler::CostProfiler(const ProfilerOptions& options, std::unique_ptr<CostCache> cache)
    : options_(options), cache_(std::move(cache)) {
  // The ort backend's own count, resolved once: every request naming a count
  // is compared with it, and reading the CPU topology is file I/O.
  if (options_.ort.threads == 0) options_.ort.threads = RuntimeDefaultThreads();
  for (Backend b : {BACKEND_CUDA, BACKEND_CPU, BACKEND_ANALYTIC, BACKEND_ORT_CPU}) {
    measure_mu_[b] = std::make_unique<std::mutex>();
  }
}

CostProfiler::~CostProfiler() = default;

absl::StatusOr<std::unique_ptr<CostProfiler>> CostProfiler::Create(const ProfilerOptions& options) {
  std::vector<std::unique_ptr<MeasureBackend>> backends;
  std::map<Backend, std::string> unavailable;
  if (options.enable_cuda) {
    auto cuda = CreateCudaBackend();
    if (cuda.ok()) {
      backends.push_back(std::move(*cuda));
    } else {
      unavailable[BACKEND_CUDA] = std::string(cuda.status().message());
    }
  } else {
    unavailable[BACKEND_CUDA] = "disabled by configuration";
  }
  auto cpu = CpuBackend::Create(options.cpu);
  // A calibration that does not load is the caller's mistake, not a missing backend.
  if (cpu.status().code() == absl::StatusCode::kInvalidArgument) return cpu.status();
  if (cpu.ok()) {
    backends.push_back(std::move(*cpu));
  } else {
    unavailable[BACKEND_CPU] = std::string(cpu.status().message());
  }
  if (!options.cache_dir.empty()) {
    std::error_code ignored;  // Open reports a directory it cannot create
    std::filesystem::create_directories(std::filesystem::path(options.cache_dir).parent_path(), ignored);
  }
  auto opened = options.cache_dir.empty() ? CostCache::OpenInMemory() : CostCache::Open(options.cache_dir, options.when_cache_in_use);
  if (!opened.ok()) return opened.status();
  auto profiler = CreateWithBackends(options, std::move(backends), std::move(*opened));
  if (!profiler.ok()) return profiler.status();
  for (auto& [backend, reason] : unavailable) (*profiler)->unavailable_[backend] = reason;
  return profiler;
}

absl::StatusOr<std::unique_ptr<CostProfiler>> CostProfiler::CreateWithBackends(
    const ProfilerOptions& options, std::vector<std::unique_ptr<MeasureBackend>> backends,
    std::unique_ptr<CostCache> cache) {
  if (cache == nullptr) {
    auto opened = CostCache::OpenInMemory();
    if (!opened.ok()) return opened.status();
    cache = std::move(*opened);
  }
  std::unique_ptr<CostProfiler> p(new CostProfiler(options, std::move(cache)));
  for (auto& b : backends) {
    if (p->backends_.count(b->kind()) == 0) p->backends_[b->kind()] = std::move(b);
  }
  return p;
}

absl::StatusOr<MeasureBackend*> CostProfiler::ResolveBackend(Backend requested, int threads) {
  if (threads < 0) return absl::InvalidArgumentError(absl::StrCat("threads must be >= 0, got ", threads));
  std::lock_guard<std::mutex> lock(mu_);
  Backend want = requested != BACKEND_UNSPECIFIED ? requested : options_.default_backend;
  if (want == BACKEND_UNSPECIFIED) {
    absl::StatusOr<Backend> automatic = AutoBackendLocked();
    if (!automatic.ok()) return automatic.status();
    want = *automatic;
  }
  if (want == BACKEND_ANALYTIC && backends_.count(want) == 0 && unavailable_.count(want) == 0) {
    // Created on first use: calibrating the cpu model takes a moment.
    auto analytic = CreateAnalyticBackend(options_.analytic_device);
    if (analytic.ok()) {
      backends_[want] = std::move(*analytic);
    } else {
      unavailable_[want] = std::string(analytic.status().message());
    }
  }
  if (want == BACKEND_ORT_CPU) return OrtBackendLocked(threads);
  auto it = backends_.find(want);
  if (it == backends_.end()) return UnavailableLocked(want);
  MeasureBackend* backend = it->second.get();
  if (threads > 0 && backend->threads() > 0 && threads != backend->threads()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", BackendName(want), " backend here measures at ", backend->threads(), " threads, not ", threads,
        " (its count is fixed when the profiler starts: taso_profiler --threads, taso --threads); the ort "
        "backend takes a thread count per request"));
  }
  return backend;
}

absl::Status CostProfiler::UnavailableLocked(Backend backend) const {
  auto why = unavailable_.find(backend);
  return absl::FailedPreconditionError(absl::StrCat(
      "the ", BackendName(backend), " backend is unavailable here",
      why != unavailable_.end() ? absl::StrCat(": ", why->second) : std::string(),
      "; ask for another backend rather than mixing backends in one model"));
}

absl::StatusOr<Backend> CostProfiler::AutoBackendLocked() {
  if (!auto_choice_.empty()) return auto_backend_;
  if (backends_.count(BACKEND_CUDA)) {
    auto_backend_ = BACKEND_CUDA;
    auto_choice_ = "a GPU is present";
    return auto_backend_;
  }
  absl::StatusOr<MeasureBackend*> ort = OrtBackendLocked(0);
  if (ort.status().code() == absl::StatusCode::kUnavailable) {
    // ONNX Runtime is installed but its worker did not start this time: the
    // choice is not settled (nor the cpu backend chosen for the process's
    // life); the request fails with this status and the next one tries again.
    return ort.status();
  }
  if (ort.ok()) {
    auto_backend_ = BACKEND_ORT_CPU;
    auto_choice_ = "there is no GPU and ONNX Runtime runs here: costs are measured in the runtime users run";
  } else if (backends_.count(BACKEND_CPU)) {
    auto_backend_ = BACKEND_CPU;
    auto_choice_ = absl::StrCat("ONNX Runtime is unavailable here (", unavailable_[BACKEND_ORT_CPU],
                                "), so oneDNN stands in; its predictions can miss the runtime by tens of percent");
  } else {
    auto_backend_ = BACKEND_ANALYTIC;
    auto_choice_ = "neither ONNX Runtime nor oneDNN runs here: the costs are estimates";
  }
  return auto_backend_;
}

absl::StatusOr<MeasureBackend*> CostProfiler::OrtBackendLocked(int threads) {
  const bool own = threads == 0 || threads == options_.ort.threads;
  if (own) {
    if (auto it = backends_.find(BACKEND_ORT_CPU); it != backends_.end()) return it->second.get();
    if (unavailable_.count(BACKEND_ORT_CPU)) return UnavailableLocked(BACKEND_ORT_CPU);
  } else if (auto it = ort_at_threads_.find(threads); it != ort_at_threads_.end()) {
    return it->second.get();
  } else if (unavailable_.count(BACKEND_ORT_CPU)) {
    return UnavailableLocked(BACKEND_ORT_CPU);
  } else if (static_cast<int>(ort_at_threads_.size()) >= options_.max_ort_thread_counts) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the ort backend here already runs workers for ", ort_at_threads_.size(), " other thread counts, its limit ",
        "(a node process each); ask for ", options_.ort.threads, " threads or one of those"));
  } else if (threads > options_.max_threads) {
    return absl::InvalidArgumentError(
        absl::StrCat(threads, " threads is over this profiler's limit of ", options_.max_threads));
  }
  // Created on first use: it starts a node process.
  OrtBackendOptions ort_options = options_.ort;
  if (!own) ort_options.threads = threads;
  // The calibration's ort weight term; a calibration that fails to load
  // already failed Create.
  if (auto calibration = LoadCalibration(options_.cpu.calibration, CalibratedBackend::kOrt); calibration.ok()) {
    ort_options.graph_cost_model = *std::move(calibration);
  }
  auto ort = OrtBackend::Create(ort_options);
  if (!ort.ok() && FailedToStartThisTime(ort.status())) {
    // Nothing is recorded, so the next request starts a worker again.
    return absl::UnavailableError(absl::StrCat("the ort backend could not start a worker",
                                               own ? "" : absl::StrCat(" at ", threads, " threads"), ": ",
                                               ort.status().message(), "; the next request tries again"));
  }
  if (!ort.ok() && !own) {
    // Another count's worker failing says nothing of the backend's own,
    // which keeps serving; this count is tried again when asked again.
    return absl::FailedPreconditionError(absl::StrCat("the ort backend could not start a worker at ", threads,
                                                      " threads: ", ort.status().message()));
  }
  if (!ort.ok()) {
    unavailable_[BACKEND_ORT_CPU] = std::string(ort.status().message());
    return UnavailableLocked(BACKEND_ORT_CPU);
  }
  MeasureBackend* created = ort->get();
  if (own) {
    backends_[BACKEND_ORT_CPU] = std::move(*ort);
  } else {
    ort_at_threads_[threads] = std::move(*ort);
  }
  return created;
}

std::string CostProfiler::BackendChoice(Backend requested) {
  if (requested != BACKEND_UNSPECIFIED) return "";
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.default_backend != BACKEND_UNSPECIFIED) {
    return "the profiler's configured default (--backend)";
  }
  AutoBackendLocked().IgnoreError();  // unsettled: no choice to describe yet
  return auto_choice_;
}

std::string CostProfiler::DescribeBackends() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (Backend b : {BACKEND_CUDA, BACKEND_CPU, BACKEND_ANALYTIC, BACKEND_ORT_CPU}) {
    auto it = backends_.find(b);
    auto why = unavailable_.find(b);
    absl::StrAppend(&out, BackendName(b), " backend: ",
                    it != backends_.end()     ? it->second->device()
                    : why != unavailable_.end() ? absl::StrCat("unavailable (", why->second, ")")
                    : b == BACKEND_ANALYTIC     ? absl::StrCat("on first use (", options_.analytic_device, ")")
                    : b == BACKEND_ORT_CPU      ? absl::StrCat("on first use (ONNX Runtime through node, ",
                                                               options_.ort.threads, " intra-op threads, level ",
                                                               OrtOptimizationLevelName(options_.ort.level), ")")
                                                : std::string("unavailable"),
                    "\n");
  }
  for (const auto& [threads, ort] : ort_at_threads_) absl::StrAppend(&out, "ort backend, as asked: ", ort->device(), "\n");
  if (!auto_choice_.empty()) absl::StrAppend(&out, "default (auto): ", auto_choice_, "\n");
  return out;
}

ProfilerCounters CostProfiler::counters() const {
  ProfilerCounters c;
  c.requests = requests_.load();
  c.cache_hits = hits_.load();
  c.cache_misses = misses_.load();
  c.shared = shared_.load();
  c.measurements = measurements_.load();
  c.errors = errors_.load();
  return c;
}

absl::StatusOr<MeasureResponse> CostProfiler::MeasureBatch(const MeasureRequest& request,
                                                           const std::function<bool()>& cancelled) {
  if (request.signatures_size() > options_.max_signatures_per_request) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request has ", request.signatures_size(), " signatures, over the limit of ",
        options_.max_signatures_per_request, " (taso_profiler --max_batch_signatures); split it"));
  }
  if (request.min_repetitions() > options_.max_request_runs) {
    return absl::InvalidArgumentError(absl::StrCat("min_repetitions ", request.min_repetitions(),
                                                   " is over this server's limit of ", options_.max_request_runs,
                                                   " (taso_profiler --max_request_runs)"));
  }
  auto backend = ResolveBackend(request.backend(), request.threads());
  if (!backend.ok()) return backend.status();
  TimingOptions timing = options_.timing;
  if (request.min_repetitions() > 0) {
    timing.repetitions = std::max(timing.repetitions, request.min_repetitions());
    timing.max_repetitions = std::max(timing.max_repetitions, timing.repetitions);
  }
  MeasureResponse response;
  *response.mutable_graph_cost_model() = (*backend)->graph_cost_model();
  response.set_backend((*backend)->kind());
  response.set_device((*backend)->device());
  response.set_threads((*backend)->threads());
  response.set_backend_choice(BackendChoice(request.backend()));
  RequestFlights flights(*this);
  for (const OpSignature& sig : request.signatures()) {
    if (cancelled && cancelled()) {
      return absl::CancelledError(absl::StrCat(
          "request cancelled (deadline passed or client gone) after ", response.results_size(), " of ",
          request.signatures_size(), " signatures; the costs measured so far are cached"));
    }
    ++requests_;
    flights.index = response.results_size();
    *response.add_results() = MeasureOne(*backend, sig, request.bypass_cache(), timing, flights);
    if (response.results().rbegin()->has_error()) ++errors_;
  }
  flights.Finish(cancelled, response);
  return response;
}

MeasureResult CostProfiler::MeasureOne(MeasureBackend* backend, const OpSignature& proto, bool bypass_cache,
                                       const TimingOptions& timing, RequestFlights& flights) {
  auto sig = SignatureFromProto(proto);
  if (!sig.ok()) return ErrorResult(sig.status());
  auto canonical = Canonicalize(*sig);
  if (!canonical.ok()) return ErrorResult(canonical.status());
  MeasureResult result;
  const bool split_view = canonical->op.kind == OpKind::kSplit && backend->splits_are_views();
  if (IsLoadTimeConstant(canonical->op.kind) || split_view) {
    // Constants are materialised when the model loads. A split's parts are
    // views into its input, as in TASO, where the backend says so: readers
    // take them with strides.
    Measurement zero;
    zero.kernel = canonical->op.kind == OpKind::kSplit ? "view: split parts alias the input" : "load-time constant";
    *result.mutable_cost() = ToCost(zero, *backend);
    return result;
  }
  const int64_t bytes = TensorBytes(canonical->op.inputs) + TensorBytes(canonical->outputs);
  if (bytes > options_.max_signature_tensor_bytes) {
    return ErrorResult(absl::ResourceExhaustedError(absl::StrFormat(
        "the signature's tensors take %d MiB, over the limit of %d MiB (taso_profiler --max_signature_tensor_mb)",
        bytes >> 20, options_.max_signature_tensor_bytes >> 20)));
  }
  if (backend->kind() == BACKEND_CPU && options_.cpu_gaps_in_ort) {
    if (std::optional<std::string> why = backend->NoKernelFor(*canonical)) {
      return MeasureInOrtForCpu(*canonical, *why, backend->threads(), bypass_cache, timing, flights);
    }
  }
  auto cost = MeasureShared(backend, *canonical, bypass_cache, timing, flights);
  if (!cost.ok()) return ErrorResult(cost.status());
  *result.mutable_cost() = *cost;
  return result;
}

MeasureResult CostProfiler::MeasureInOrtForCpu(const CanonicalSignature& sig, const std::string& why, int backend_threads,
                                               bool bypass_cache, const TimingOptions& timing,
                                               RequestFlights& flights) {
  // At the cpu backend's threads: the same configuration as its own costs.
  auto ort = ResolveBackend(BACKEND_ORT_CPU, backend_threads);
  if (!ort.ok()) {
    std::string reason(ort.status().message());
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = unavailable_.find(BACKEND_ORT_CPU); it != unavailable_.end()) reason = it->second;
    }
    return ErrorResult(absl::UnimplementedError(
        absl::StrCat(why, "; ONNX Runtime, which measures such operators for it, is unavailable: ", reason)));
  }
  // Cached under the ort backend's own key: the same measurement as
  // `--backend ort` makes, invalidated with ONNX Runtime's version, and never
  // read back as a cpu cost.
  auto cost = MeasureShared(*ort, sig, bypass_cache, timing, flights,
                            absl::StrCat("measured in ONNX Runtime for the cpu backend (", why, "): "));
  if (!cost.ok()) {
    return ErrorResult(absl::Status(cost.status().code(), absl::StrCat(why, "; ONNX Runtime could not measure it either: ",
                                                                      cost.status().message())));
  }
  MeasureResult result;
  *result.mutable_cost() = *std::move(cost);
  return result;
}

absl::StatusOr<Cost> CostProfiler::MeasureShared(MeasureBackend* backend, const CanonicalSignature& sig,
                                                 bool bypass_cache, const TimingOptions& timing,
                                                 RequestFlights& flights, const std::string& kernel_prefix) {
  const auto with_prefix = [&](absl::StatusOr<Cost> cost) {
    if (cost.ok() && !kernel_prefix.empty()) cost->set_kernel(absl::StrCat(kernel_prefix, cost->kernel()));
    return cost;
  };
  const CacheKey cache_key{backend->kind(), backend->device(), sig.key};
  const std::string key = EncodeCacheKey(cache_key);
  std::shared_ptr<Flight> flight;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto in_flight = flights_.find(key);
    if (in_flight != flights_.end()) {
      ++shared_;
      std::shared_ptr<Flight> f = in_flight->second;
      // Its first timing never waits on another flight, so this wait ends.
      f->cv.wait(lock, [&] { return f->first_ready; });
      if (!f->done) flights.AnsweredEarly(f, kernel_prefix);
      return with_prefix(f->result);
    }
    // Checked under the lock: a measurement finishing now has already written
    // the cache before it leaves flights_, so it cannot be measured twice.
    if (!bypass_cache) {
      auto cached = cache_->Get(cache_key);
      if (!cached.ok()) return cached.status();
      if (cached->has_value()) {
        ++hits_;
        Cost cost = (*cached)->cost();
        cost.set_from_cache(true);
        return with_prefix(std::move(cost));
      }
    }
    ++misses_;
    flight = std::make_shared<Flight>();
    flight->key = key;
    flight->cache_key = cache_key;
    flight->sig = sig;
    flight->backend = backend;
    flight->timing = timing;
    flights_[key] = flight;
  }

  absl::StatusOr<Cost> result;
  if (absl::StatusOr<Measurement> m = TimeOnce(*backend, sig, timing); m.ok()) {
    result = ToCost(*m, *backend);
  } else {
    result = m.status();
  }
  if (!result.ok() || backend->timings_per_operator() <= 1) {
    EndFlight(*flight, result);
    return with_prefix(std::move(result));
  }
  // Timed again at the end of this request (RequestFlights::Finish); until
  // then others may take this figure, and take the final one at their end.
  {
    std::lock_guard<std::mutex> lock(mu_);
    flight->result = result;
    flight->first_ready = true;
  }
  flight->cv.notify_all();
  flights.Start(flight, *result);
  flights.AnsweredEarly(flight, kernel_prefix);
  return with_prefix(std::move(result));
}

absl::StatusOr<Measurement> CostProfiler::TimeOnce(MeasureBackend& backend, const CanonicalSignature& sig,
                                                   const TimingOptions& timing) {
  std::lock_guard<std::mutex> measuring(*measure_mu_[backend.kind()]);
  ++measurements_;
  return backend.Measure(sig, timing);
}

void CostProfiler::TimeAgain(Flight& flight, Cost& best, std::vector<double>& timed_ms) {
  const absl::StatusOr<Measurement> again = TimeOnce(*flight.backend, flight.sig, flight.timing);
  if (!again.ok()) return;  // the figures so far stand
  timed_ms.push_back(again->median_ms);
  if (again->median_ms < best.median_ms()) best = ToCost(*again, *flight.backend);
}

void CostProfiler::EndFlight(Flight& flight, const absl::StatusOr<Cost>& result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (flight.done) return;
  }
  if (result.ok()) {
    CacheEntry entry;
    *entry.mutable_signature() = SignatureToProto(flight.sig.op);
    *entry.mutable_cost() = *result;
    absl::Status stored = cache_->Put(flight.cache_key, entry);
    if (!stored.ok()) {
      // The figure is still right; only its persistence failed.
      WarnCacheNotStored(stored);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    flight.result = result;
    flight.first_ready = true;
    flight.done = true;
    flights_.erase(flight.key);
  }
  flight.cv.notify_all();
}

absl::StatusOr<Cost> CostProfiler::FinalFigure(Flight& flight) {
  std::unique_lock<std::mutex> lock(mu_);
  flight.cv.wait(lock, [&] { return flight.done; });
  return flight.result;
}

absl::StatusOr<ListCacheResponse> CostProfiler::ListCache(const ListCacheRequest& request) {
  return cache_->List(request);
}

absl::StatusOr<InvalidateCacheResponse> CostProfiler::InvalidateCache(const InvalidateCacheRequest& request) {
  std::vector<std::string> keys;
  for (int i = 0; i < request.signatures_size(); ++i) {
    auto sig = SignatureFromProto(request.signatures(i));
    if (!sig.ok()) return absl::InvalidArgumentError(absl::StrCat("signature ", i, ": ", sig.status().message()));
    auto canonical = Canonicalize(*sig);
    if (!canonical.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("signature ", i, ": ", canonical.status().message()));
    }
    keys.push_back(canonical->key);
  }
  auto removed = cache_->Invalidate(keys, request.all(), request.backend(), request.device());
  if (!removed.ok()) return removed.status();
  InvalidateCacheResponse response;
  response.set_removed(*removed);
  return response;
}

}  // namespace taso::profiler
