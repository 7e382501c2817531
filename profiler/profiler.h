// The profiler library: the service's logic, also used in-process (the
// optimizer's embedded mode). It canonicalises signatures, answers from the
// persistent cache, and otherwise measures on a backend: concurrent
// requests for the same (backend, device, signature) share the one
// measurement in flight. A backend may ask for each operator to be timed
// more than once, apart (timings_per_operator): the request that measured it
// times it again at its end, and every request sharing it answers the
// fastest figure. Measurements on one backend never overlap.
#ifndef TASO_PROFILER_PROFILER_H_
#define TASO_PROFILER_PROFILER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "costs/backend.h"
#include "profiler/cost_cache.h"
#include "profiler/cpu/cpu_backend.h"
#include "profiler/ort/ort_backend.h"
#include "costs/timing.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

struct ProfilerOptions {
  // Cost cache directory; empty keeps costs in memory only (lost at exit).
  std::string cache_dir;
  // A server fails when another process holds the cache; a one-shot tool may
  // read it and keep its own measurements in memory (cache_note() says so).
  WhenCacheInUse when_cache_in_use = WhenCacheInUse::kFail;
  // The backend used when a request leaves it unspecified. UNSPECIFIED picks
  // cuda where a device is present, else ort where ONNX Runtime runs (the
  // runtime users run), else cpu (BackendChoice says which and why).
  Backend default_backend = BACKEND_UNSPECIFIED;
  TimingOptions timing;
  CpuBackendOptions cpu;
  // Try the cuda backend (it reports why it is unavailable otherwise).
  bool enable_cuda = true;
  // The device the analytic backend models: v100, t4, a100, h100 or cpu.
  std::string analytic_device = "cpu";
  // The ort backend (started on first use: it spawns a node worker).
  OrtBackendOptions ort;
  // Operators the cpu backend has no kernel for (opaque ones, tensors other
  // than float32) are measured by the ort backend where it is available:
  // cached under its key, and answered as its costs (Cost.backend, and a
  // kernel saying so). Where ONNX Runtime is missing they stay unmeasured,
  // the error saying why. False leaves them unmeasured.
  bool cpu_gaps_in_ort = true;
  // Whole graphs (MeasureGraph): timing defaults and request limits.
  GraphTimingOptions graph_timing;
  int max_graph_nodes = 20000;                  // per graph: INVALID_ARGUMENT above
  int64_t max_graph_tensor_bytes = int64_t{4} << 30;  // per graph, every tensor: RESOURCE_EXHAUSTED above
  int max_graphs_per_request = 8;               // INVALID_ARGUMENT above
  // MeasureBatch: signatures per request (INVALID_ARGUMENT above) and the
  // bytes of one signature's tensors (that entry RESOURCE_EXHAUSTED above),
  // so a request cannot make the server allocate without bound.
  int max_signatures_per_request = 10000;
  int64_t max_signature_tensor_bytes = int64_t{4} << 30;
  // What a request may ask of the timing: MeasureBatch.min_repetitions and
  // MeasureGraph.warmup and min_runs at most max_request_runs, min_timed_ms
  // at most max_request_timed_ms. Timing holds the backend, so a request
  // asking more is INVALID_ARGUMENT rather than the server busy for hours.
  int max_request_runs = 1000;
  double max_request_timed_ms = 10000;
  // Requests naming a thread count (MeasureRequest.threads): the ort backend
  // starts a worker per count other than its own, for at most this many
  // counts (RESOURCE_EXHAUSTED past it), each at most max_threads.
  int max_ort_thread_counts = 4;
  int max_threads = 256;
};

// Where costs are cached unless told otherwise: $XDG_CACHE_HOME/taso/costs,
// else ~/.cache/taso/costs. Shared by taso_profiler and embedded callers.
std::string DefaultCacheDir();
// A --cache_dir flag as every binary reads it: "" means DefaultCacheDir(),
// "none" means memory only (ProfilerOptions::cache_dir ""), else the path.
std::string CacheDirFromFlag(const std::string& flag);

// Counters since the profiler started; all monotone.
struct ProfilerCounters {
  int64_t requests = 0;      // signatures asked for
  int64_t cache_hits = 0;    // answered from the cache without measuring
  int64_t cache_misses = 0;  // not in the cache: this request measured
  int64_t shared = 0;        // waited for another request's measurement
  int64_t measurements = 0;  // kernels actually timed (or estimated)
  int64_t errors = 0;        // entries answered with an error
};

class CostProfiler {
 public:
  static absl::StatusOr<std::unique_ptr<CostProfiler>> Create(const ProfilerOptions& options);
  // With given backends (tests, or a caller that built its own). The first
  // backend of a kind wins; `cache` may be null (memory only).
  static absl::StatusOr<std::unique_ptr<CostProfiler>> CreateWithBackends(
      const ProfilerOptions& options, std::vector<std::unique_ptr<MeasureBackend>> backends,
      std::unique_ptr<CostCache> cache);
  ~CostProfiler();

  // results[i] answers signatures[i]; a bad entry (INVALID_ARGUMENT) or one
  // the backend cannot run (UNIMPLEMENTED) fails alone. The whole request
  // fails only for an unavailable backend (FAILED_PRECONDITION), or when
  // `cancelled` (checked between signatures: a gRPC deadline or a client
  // gone) returns true: CANCELLED, with what was measured so far cached.
  absl::StatusOr<MeasureResponse> MeasureBatch(const MeasureRequest& request,
                                               const std::function<bool()>& cancelled = nullptr);
  // Whole graphs run end to end (MeasureGraphRequest says how). One graph is
  // answered from the cache when it can be (key: backend, device, the
  // graph's structural hash), several are timed interleaved and stored.
  // FAILED_PRECONDITION for an unavailable backend, UNIMPLEMENTED for one
  // that cannot run whole graphs, CANCELLED as MeasureBatch; a graph that is
  // malformed, over the limits or not runnable fails alone. ONNX models
  // (onnx_models) are timed as files by a backend that runs them (ort),
  // their outputs compared first when asked (compare_outputs).
  absl::StatusOr<MeasureGraphResponse> MeasureGraph(const MeasureGraphRequest& request,
                                                    const std::function<bool()>& cancelled = nullptr);
  absl::StatusOr<ListCacheResponse> ListCache(const ListCacheRequest& request);
  absl::StatusOr<InvalidateCacheResponse> InvalidateCache(const InvalidateCacheRequest& request);

  ProfilerCounters counters() const;
  // Non-empty when the cache is another process's, read as a snapshot.
  const std::string& cache_note() const { return cache_->snapshot_note(); }
  // The backend a request with `requested` at `threads` (0: the backend's
  // own) would use. The ort backend runs any count (a worker each, up to
  // max_ort_thread_counts); cpu only its own (FAILED_PRECONDITION).
  absl::StatusOr<MeasureBackend*> ResolveBackend(Backend requested, int threads = 0);
  // Why a request naming no backend gets the one it gets ("" when it named
  // one): the configured default, or the auto choice and its reason.
  std::string BackendChoice(Backend requested);
  // One line per backend: available with its device, or why not.
  std::string DescribeBackends() const;

 private:
  // One measurement in progress, shared by every request that asks for its
  // key; and what one MeasureBatch owes its flights (the later timings of
  // those it started, the final figures of those it answered early).
  struct Flight;
  class RequestFlights;
  CostProfiler(const ProfilerOptions& options, std::unique_ptr<CostCache> cache);
  MeasureResult MeasureOne(MeasureBackend* backend, const OpSignature& proto, bool bypass_cache,
                           const TimingOptions& timing, RequestFlights& flights);
  // The cost of `sig` on `backend`: cached, another request's flight, or
  // measured here. `kernel_prefix` goes before the kernel text, now and in
  // the final figure.
  absl::StatusOr<Cost> MeasureShared(MeasureBackend* backend, const CanonicalSignature& sig, bool bypass_cache,
                                     const TimingOptions& timing, RequestFlights& flights,
                                     const std::string& kernel_prefix = "");
  // One timing of `sig`, holding the backend's measurement lock.
  absl::StatusOr<Measurement> TimeOnce(MeasureBackend& backend, const CanonicalSignature& sig,
                                       const TimingOptions& timing);
  // A started flight timed once more: `best` becomes the faster figure, and
  // `timed_ms` gains this timing's median (a failed timing leaves both).
  void TimeAgain(Flight& flight, Cost& best, std::vector<double>& timed_ms);
  // Caches a flight's final figure (`result` when it is ok), publishes it,
  // and takes the flight out of flights_; nothing when already done.
  void EndFlight(Flight& flight, const absl::StatusOr<Cost>& result);
  // Waits for the final figure of another request's flight.
  absl::StatusOr<Cost> FinalFigure(Flight& flight);
  // A figure measured but not stored in the cache, said on stderr.
  static void WarnCacheNotStored(const absl::Status& stored);

  ProfilerOptions options_;
  std::unique_ptr<CostCache> cache_;
  mutable std::mutex mu_;  // guards backends_, unavailable_, flights_
  std::map<Backend, std::unique_ptr<MeasureBackend>> backends_;
  std::map<Backend, std::string> unavailable_;  // backend -> reason
  std::map<std::string, std::shared_ptr<Flight>> flights_;
  std::map<Backend, std::unique_ptr<std::mutex>> measure_mu_;  // one measurement at a time per backend
  // Ort workers at thread counts other than options_.ort's, by count.
  std::map<int, std::unique_ptr<MeasureBackend>> ort_at_threads_;
  // The auto default, resolved once (AutoBackendLocked), and why.
  Backend auto_backend_ = BACKEND_UNSPECIFIED;
  std::string auto_choice_;

  // With mu_ held: the auto default (the ort backend's UNAVAILABLE, and no
  // choice settled, when its worker failed to start this time); the ort
  // backend at `threads` (0: its own), started on first use; the
  // FAILED_PRECONDITION of an unavailable one.
  absl::StatusOr<Backend> AutoBackendLocked();
  absl::StatusOr<MeasureBackend*> OrtBackendLocked(int threads);
  absl::Status UnavailableLocked(Backend backend) const;

  // A signature the cpu backend has no kernel for (`why`), measured by the
  // ort backend (cpu_gaps_in_ort).
  MeasureResult MeasureInOrtForCpu(const CanonicalSignature& sig, const std::string& why, int backend_threads,
                                   bool bypass_cache, const TimingOptions& timing, RequestFlights& flights);
  // MeasureGraph's ONNX-model form: timed (and compared) by `backend` as files, never cached.
  absl::StatusOr<MeasureGraphResponse> MeasureOnnxModels(const MeasureGraphRequest& request, MeasureBackend& backend,
                                                         const GraphTimingOptions& timing,
                                                         const std::function<bool()>& cancelled);
  // A graph's cache key under a view policy, and the checks before measuring it.
  absl::StatusOr<std::string> GraphKeyAndLimits(const Graph& graph, ViewPolicy views) const;

  std::atomic<int64_t> requests_{0}, hits_{0}, misses_{0}, shared_{0}, measurements_{0}, errors_{0};
};

}  // namespace taso::profiler

#endif  // TASO_PROFILER_PROFILER_H_
