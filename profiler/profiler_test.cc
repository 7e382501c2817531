// The profiler library: cache hits and misses (by counters), one measurement
// for concurrent duplicates, per-entry errors, persistence across restarts,
// listing and invalidation. A counting backend stands in for the hardware
// here; the last tests use the real oneDNN backend.
#include "profiler/profiler.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::F32;

OpSignature Relu(int64_t n) { return SignatureToProto(Signature{OpKind::kRelu, {}, {F32({n})}}); }

OpSignature Conv(int64_t c) {
  return SignatureToProto(Signature{OpKind::kConv2D, {}, {F32({1, c, 8, 8}), F32({c, c, 3, 3})}});
}

// Counts calls; takes `delay` per measurement so concurrent callers overlap.
class CountingBackend : public MeasureBackend {
 public:
  CountingBackend(Backend kind, std::string device, std::chrono::milliseconds delay = {})
      : kind_(kind), device_(std::move(device)), delay_(delay) {}
  Backend kind() const override { return kind_; }
  const std::string& device() const override { return device_; }
  absl::StatusOr<Measurement> Measure(const CanonicalSignature& sig, const TimingOptions&) override {
    ++calls;
    std::this_thread::sleep_for(delay_);
    if (sig.op.kind == OpKind::kOpaque) return absl::UnimplementedError("no kernel for opaque");
    Measurement m;
    m.mean_ms = m.median_ms = m.min_ms = 1.0 + calls;
    m.repetitions = 32;
    m.kernel = "counting";
    return m;
  }
  std::atomic<int> calls{0};

 private:
  Backend kind_;
  std::string device_;
  std::chrono::milliseconds delay_;
};

struct Fixture {
  CountingBackend* backend = nullptr;
  std::unique_ptr<CostProfiler> profiler;
};

Fixture MakeProfiler(std::unique_ptr<CostCache> cache = nullptr, std::chrono::milliseconds delay = {}) {
  Fixture f;
  auto backend = std::make_unique<CountingBackend>(BACKEND_CPU, "test cpu", delay);
  f.backend = backend.get();
  std::vector<std::unique_ptr<MeasureBackend>> backends;
  backends.push_back(std::move(backend));
  ProfilerOptions options;
  options.default_backend = BACKEND_CPU;
  auto p = CostProfiler::CreateWithBackends(options, std::move(backends), std::move(cache));
  EXPECT_TRUE(p.ok()) << p.status();
  f.profiler = std::move(*p);
  return f;
}

MeasureRequest Request(std::vector<OpSignature> sigs) {
  MeasureRequest r;
  for (auto& s : sigs) *r.add_signatures() = std::move(s);
  return r;
}

TEST(ProfilerTest, SecondRequestIsACacheHit) {
  Fixture f = MakeProfiler();
  auto first = f.profiler->MeasureBatch(Request({Relu(16)}));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->results(0).has_cost());
  EXPECT_FALSE(first->results(0).cost().from_cache());
  auto second = f.profiler->MeasureBatch(Request({Relu(16), Relu(32)}));
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->results(0).cost().from_cache());
  EXPECT_EQ(second->results(0).cost().median_ms(), first->results(0).cost().median_ms());
  EXPECT_FALSE(second->results(1).cost().from_cache());
  const ProfilerCounters c = f.profiler->counters();
  EXPECT_EQ(c.requests, 3);
  EXPECT_EQ(c.cache_hits, 1);
  EXPECT_EQ(c.cache_misses, 2);
  EXPECT_EQ(c.measurements, 2);
  EXPECT_EQ(f.backend->calls, 2);
  EXPECT_EQ(first->results(0).cost().device(), "test cpu");
  EXPECT_EQ(first->results(0).cost().backend(), BACKEND_CPU);
  EXPECT_GT(first->results(0).cost().measured_at().seconds(), 0);
}

TEST(ProfilerTest, SplitRecordsDoNotChangeTheKey) {
  Fixture f = MakeProfiler();
  TensorType recorded = F32({4, 6});
  recorded.split[1] = MakeSplit(2, nullptr, nullptr);
  ASSERT_TRUE(f.profiler->MeasureBatch(Request({SignatureToProto(Signature{OpKind::kRelu, {}, {recorded}})})).ok());
  auto plain = f.profiler->MeasureBatch(Request({SignatureToProto(Signature{OpKind::kRelu, {}, {F32({4, 6})}})}));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->results(0).cost().from_cache());
}

TEST(ProfilerTest, BypassCacheMeasuresAgain) {
  Fixture f = MakeProfiler();
  ASSERT_TRUE(f.profiler->MeasureBatch(Request({Relu(8)})).ok());
  MeasureRequest again = Request({Relu(8)});
  again.set_bypass_cache(true);
  auto r = f.profiler->MeasureBatch(again);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->results(0).cost().from_cache());
  EXPECT_EQ(f.backend->calls, 2);
}

TEST(ProfilerTest, ConcurrentDuplicatesMeasureOnce) {
  Fixture f = MakeProfiler(nullptr, std::chrono::milliseconds(300));
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  std::vector<double> medians(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto r = f.profiler->MeasureBatch(Request({Conv(4)}));
      if (r.ok() && r->results(0).has_cost()) {
        ++ok;
        medians[i] = r->results(0).cost().median_ms();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, kThreads);
  EXPECT_EQ(f.backend->calls, 1);
  const ProfilerCounters c = f.profiler->counters();
  EXPECT_EQ(c.measurements, 1);
  EXPECT_EQ(c.cache_misses, 1);
  EXPECT_EQ(c.shared + c.cache_hits, kThreads - 1);
  for (double m : medians) EXPECT_EQ(m, medians[0]);
}

TEST(ProfilerTest, BadEntriesFailAloneWithInvalidArgument) {
  Fixture f = MakeProfiler();
  OpSignature unknown_kind = Relu(4);
  unknown_kind.set_kind(static_cast<ir::OpKind>(99));
  // 3 input channels do not match a weight with 2 per group.
  OpSignature bad_shapes = SignatureToProto(Signature{OpKind::kConv2D, {}, {F32({1, 3, 8, 8}), F32({4, 2, 3, 3})}});
  OpSignature input = Relu(4);
  input.set_kind(ir::OP_INPUT);
  OpSignature opaque = Relu(4);
  opaque.set_kind(ir::OP_OPAQUE);
  opaque.mutable_params()->mutable_opaque()->set_op_type("LayerNorm");
  opaque.mutable_params()->mutable_opaque()->add_output_types()->CopyFrom(TensorTypeToProto(F32({4})));
  auto r = f.profiler->MeasureBatch(Request({Relu(4), unknown_kind, bad_shapes, input, opaque, Conv(2)}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->results_size(), 6);
  EXPECT_TRUE(r->results(0).has_cost());
  for (int i : {1, 2, 3}) {
    ASSERT_TRUE(r->results(i).has_error()) << i;
    EXPECT_EQ(r->results(i).error().code(), static_cast<int>(absl::StatusCode::kInvalidArgument)) << i;
    EXPECT_FALSE(r->results(i).error().message().empty());
  }
  EXPECT_NE(r->results(1).error().message().find("unknown operator kind 99"), std::string::npos)
      << r->results(1).error().message();
  EXPECT_NE(r->results(2).error().message().find("conv2d"), std::string::npos);
  EXPECT_NE(r->results(3).error().message().find("not an operator"), std::string::npos);
  ASSERT_TRUE(r->results(4).has_error());
  EXPECT_EQ(r->results(4).error().code(), static_cast<int>(absl::StatusCode::kUnimplemented));
  EXPECT_TRUE(r->results(5).has_cost());
  EXPECT_EQ(f.profiler->counters().errors, 4);
}

TEST(ProfilerTest, CancellationStopsBetweenSignaturesAndKeepsWhatWasMeasured) {
  Fixture f = MakeProfiler();
  int checks = 0;
  auto r = f.profiler->MeasureBatch(Request({Relu(1), Relu(2), Relu(3)}), [&] { return ++checks > 2; });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_NE(r.status().message().find("after 2 of 3 signatures"), std::string::npos) << r.status();
  EXPECT_EQ(f.backend->calls, 2);
  auto again = f.profiler->MeasureBatch(Request({Relu(1), Relu(2)}));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->results(0).cost().from_cache());
  EXPECT_TRUE(again->results(1).cost().from_cache());
}

TEST(ProfilerTest, ConstantsCostNothingAndAreNotMeasured) {
  Fixture f = MakeProfiler();
  OpParams p;
  p.shape = {4, 4};
  auto r = f.profiler->MeasureBatch(Request({SignatureToProto(Signature{OpKind::kConstIMatMul, p, {}})}));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->results(0).has_cost());
  EXPECT_EQ(r->results(0).cost().median_ms(), 0);
  EXPECT_EQ(f.backend->calls, 0);
}

TEST(ProfilerTest, UnavailableBackendFailsTheRequest) {
  Fixture f = MakeProfiler();
  MeasureRequest r = Request({Relu(4)});
  r.set_backend(BACKEND_CUDA);
  auto result = f.profiler->MeasureBatch(r);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("cuda backend is unavailable"), std::string::npos) << result.status();
}

TEST(ProfilerTest, CacheSurvivesARestart) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/restart_cache");
  {
    auto cache = CostCache::Open(dir);
    ASSERT_TRUE(cache.ok()) << cache.status();
    Fixture f = MakeProfiler(std::move(*cache));
    ASSERT_TRUE(f.profiler->MeasureBatch(Request({Conv(3), Relu(5)})).ok());
    EXPECT_EQ(f.backend->calls, 2);
  }
  auto cache = CostCache::Open(dir);
  ASSERT_TRUE(cache.ok()) << cache.status();
  Fixture f = MakeProfiler(std::move(*cache));
  auto r = f.profiler->MeasureBatch(Request({Conv(3), Relu(5)}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->results(0).cost().from_cache());
  EXPECT_TRUE(r->results(1).cost().from_cache());
  EXPECT_EQ(f.backend->calls, 0);
  EXPECT_EQ(f.profiler->counters().cache_hits, 2);

  // A second process cannot open the same cache: it is told why.
  auto second = CostCache::Open(dir);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
}

// A machine that runs slow, then fast: each kernel's time is its channel
// count in ms times the next of `factors`, round and round.
class SwingingBackend : public MeasureBackend {
 public:
  Backend kind() const override { return BACKEND_ORT_CPU; }
  const std::string& device() const override { return device_; }
  int timings_per_operator() const override { return 2; }
  absl::StatusOr<Measurement> Measure(const CanonicalSignature& sig, const TimingOptions&) override {
    if (before_measure) before_measure(sig);
    measured.push_back(sig.key);
    if (sig.op.kind == OpKind::kRelu) return absl::UnimplementedError("no relu here");
    const double factor = factors[(measured.size() - 1) % factors.size()];
    Measurement m;
    m.mean_ms = m.median_ms = m.min_ms = static_cast<double>(sig.op.inputs[0].dims[1]) * factor;
    m.repetitions = 10;
    m.kernel = "swinging";
    return m;
  }
  std::vector<double> factors = {1.5, 1.0};
  // The profiler runs one Measure at a time per backend, so these need no lock.
  std::vector<std::string> measured;
  std::function<void(const CanonicalSignature&)> before_measure;

 private:
  std::string device_ = "swinging machine";
};

// A profiler over one SwingingBackend, owned by the profiler.
std::unique_ptr<CostProfiler> SwingingProfiler(std::unique_ptr<SwingingBackend> backend) {
  std::vector<std::unique_ptr<MeasureBackend>> backends;
  backends.push_back(std::move(backend));
  ProfilerOptions options;
  options.default_backend = BACKEND_ORT_CPU;
  auto profiler = CostProfiler::CreateWithBackends(options, std::move(backends), nullptr);
  EXPECT_TRUE(profiler.ok()) << profiler.status();
  return profiler.ok() ? std::move(*profiler) : nullptr;
}

// Each operator a request measures is timed again after the others, last
// first, and the faster figure is answered and cached; cached ones and
// failures are not timed again.
TEST(ProfilerTest, OperatorsAreTimedTwiceApartAndTheFasterKept) {
  auto owned = std::make_unique<SwingingBackend>();
  SwingingBackend* backend = owned.get();
  // Timings in order: conv 4 x1.5, conv 8 x1, relu (fails), conv 16 x1.5;
  // again, last first: conv 16 x1, conv 8 x1.5, conv 4 x1.
  backend->factors = {1.5, 1.0, 1.0, 1.5, 1.0, 1.5, 1.0};
  auto profiler = SwingingProfiler(std::move(owned));
  ASSERT_NE(profiler, nullptr);
  auto first = profiler->MeasureBatch(Request({Conv(4), Conv(8), Relu(16), Conv(16)}));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(backend->measured.size(), 7u) << "three operators twice, the failing one once";
  EXPECT_EQ(backend->measured[4], backend->measured[3]) << "the last operator is timed again first";
  EXPECT_EQ(backend->measured[6], backend->measured[0]);
  EXPECT_DOUBLE_EQ(first->results(0).cost().median_ms(), 4.0);   // 6, then 4
  EXPECT_DOUBLE_EQ(first->results(1).cost().median_ms(), 8.0);   // 8, then 12
  EXPECT_DOUBLE_EQ(first->results(3).cost().median_ms(), 16.0);  // 24, then 16
  EXPECT_TRUE(first->results(2).has_error()) << first->results(2).DebugString();
  EXPECT_NE(first->results(0).cost().kernel().find("the faster of 6.0000 and 4.0000 ms"), std::string::npos)
      << first->results(0).cost().kernel();
  EXPECT_EQ(profiler->counters().measurements, 7);

  // The faster figures are the cached ones, and cached costs are not timed again.
  auto again = profiler->MeasureBatch(Request({Conv(4), Conv(8), Conv(16)}));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(backend->measured.size(), 7u);
  EXPECT_DOUBLE_EQ(again->results(0).cost().median_ms(), 4.0);
  EXPECT_DOUBLE_EQ(again->results(1).cost().median_ms(), 8.0);
  EXPECT_DOUBLE_EQ(again->results(2).cost().median_ms(), 16.0);
  EXPECT_TRUE(again->results(2).cost().from_cache());
}

// Runs `requests` at once; fails the test (and exits, since a deadlocked
// thread cannot be joined) if they have not all answered within a minute.
std::vector<absl::StatusOr<MeasureResponse>> RunAtOnce(CostProfiler& profiler, std::vector<MeasureRequest> requests,
                                                       const std::function<void()>& while_running = nullptr) {
  std::vector<std::future<absl::StatusOr<MeasureResponse>>> futures;
  for (const MeasureRequest& r : requests) {
    futures.push_back(std::async(std::launch::async, [&profiler, r] { return profiler.MeasureBatch(r); }));
  }
  if (while_running) while_running();
  std::vector<absl::StatusOr<MeasureResponse>> responses;
  for (auto& f : futures) {
    if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      ADD_FAILURE() << "concurrent requests did not answer within a minute: deadlocked";
      std::_Exit(1);
    }
    responses.push_back(f.get());
  }
  return responses;
}

// Concurrent clients asking for one new signature share one measurement,
// timed twice: every one of them answers the faster figure, the one cached.
TEST(ProfilerTest, ConcurrentDuplicatesTimedTwiceAllAnswerTheFasterFigure) {
  auto owned = std::make_unique<SwingingBackend>();
  SwingingBackend* backend = owned.get();
  backend->before_measure = [](const CanonicalSignature&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  auto profiler = SwingingProfiler(std::move(owned));
  ASSERT_NE(profiler, nullptr);
  constexpr int kClients = 4;
  auto responses = RunAtOnce(*profiler, std::vector<MeasureRequest>(kClients, Request({Conv(8)})));
  EXPECT_EQ(backend->measured.size(), 2u) << "one measurement, timed twice";
  for (const auto& r : responses) {
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->results(0).has_cost()) << r->results(0).DebugString();
    EXPECT_DOUBLE_EQ(r->results(0).cost().median_ms(), 8.0) << "12 first, then 8";
    EXPECT_EQ(r->results(0).cost().measured_at().seconds(), responses[0]->results(0).cost().measured_at().seconds());
    EXPECT_EQ(r->results(0).cost().measured_at().nanos(), responses[0]->results(0).cost().measured_at().nanos());
  }
  auto cached = profiler->MeasureBatch(Request({Conv(8)}));
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_TRUE(cached->results(0).cost().from_cache());
  EXPECT_DOUBLE_EQ(cached->results(0).cost().median_ms(), 8.0);
}

// Two requests each taking the other's operator while its second timing is
// still to come (X then Y, and Y then X): neither waits for the other's
// final figure before its own are final, so both finish, and agree.
TEST(ProfilerTest, RequestsTakingEachOthersOperatorsBothFinishAndAgree) {
  auto owned = std::make_unique<SwingingBackend>();
  SwingingBackend* backend = owned.get();
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_open = false;
  auto profiler = SwingingProfiler(std::move(owned));
  ASSERT_NE(profiler, nullptr);
  CostProfiler& p = *profiler;
  // The first timing waits until both requests have started a flight of
  // their own; a second timing waits (a bounded while) until both have taken
  // the other's, so neither flight ends and is cached before the other
  // request reaches it.
  backend->before_measure = [&](const CanonicalSignature&) {
    if (backend->measured.size() >= 2) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (p.counters().shared < 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      return;
    }
    if (!backend->measured.empty()) return;
    std::unique_lock<std::mutex> lock(gate_mu);
    gate_cv.wait(lock, [&] { return gate_open; });
  };
  auto responses = RunAtOnce(p, {Request({Conv(4), Conv(8)}), Request({Conv(8), Conv(4)})}, [&] {
    while (p.counters().cache_misses < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lock(gate_mu);
    gate_open = true;
    gate_cv.notify_all();
  });
  ASSERT_EQ(backend->measured.size(), 4u) << "each operator timed twice, by the request that started it";
  ASSERT_TRUE(responses[0].ok()) << responses[0].status();
  ASSERT_TRUE(responses[1].ok()) << responses[1].status();
  const MeasureResponse& a = *responses[0];
  const MeasureResponse& b = *responses[1];
  EXPECT_EQ(p.counters().shared, 2);
  // Both answer the same final figures, whichever request timed which.
  EXPECT_DOUBLE_EQ(a.results(0).cost().median_ms(), b.results(1).cost().median_ms());
  EXPECT_DOUBLE_EQ(a.results(1).cost().median_ms(), b.results(0).cost().median_ms());
  EXPECT_EQ(a.results(0).cost().kernel(), b.results(1).cost().kernel());
  EXPECT_EQ(a.results(1).cost().kernel(), b.results(0).cost().kernel());
  EXPECT_NE(a.results(0).cost().kernel().find("timed apart"), std::string::npos) << a.results(0).cost().kernel();
  EXPECT_NE(a.results(1).cost().kernel().find("timed apart"), std::string::npos) << a.results(1).cost().kernel();
}

TEST(ProfilerTest, ACacheInUseIsReadAsASnapshotWhenAskedAndNewCostsStayInMemory) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/shared_cache");
  auto held = CostCache::Open(dir);
  ASSERT_TRUE(held.ok()) << held.status();
  Fixture owner = MakeProfiler(std::move(*held));
  ASSERT_TRUE(owner.profiler->MeasureBatch(Request({Conv(3)})).ok());

  // The second process reads what the first has written and measures the rest.
  auto snapshot = CostCache::Open(dir, WhenCacheInUse::kReadSnapshot);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_NE((*snapshot)->snapshot_note().find("in use by another process"), std::string::npos);
  Fixture second = MakeProfiler(std::move(*snapshot));
  EXPECT_FALSE(second.profiler->cache_note().empty());
  auto r = second.profiler->MeasureBatch(Request({Conv(3), Relu(5)}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->results(0).cost().from_cache());
  EXPECT_FALSE(r->results(1).cost().from_cache());
  EXPECT_EQ(second.backend->calls, 1);
  // Its own measurement is answered from memory the second time...
  auto again = second.profiler->MeasureBatch(Request({Relu(5)}));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->results(0).cost().from_cache());
  EXPECT_EQ(second.backend->calls, 1);
  ASSERT_TRUE(second.profiler->ListCache(ListCacheRequest()).ok());
  // ...and not written to the shared cache, which it cannot change.
  InvalidateCacheRequest wipe;
  wipe.set_all(true);
  EXPECT_EQ(second.profiler->InvalidateCache(wipe).status().code(), absl::StatusCode::kFailedPrecondition);
  auto owners = owner.profiler->MeasureBatch(Request({Relu(5)}));
  ASSERT_TRUE(owners.ok());
  EXPECT_FALSE(owners->results(0).cost().from_cache());

  // Without asking, the second open still fails and says why.
  auto strict = CostCache::Open(dir);
  EXPECT_EQ(strict.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ProfilerTest, RequestsOverTheSizeLimitsAreRefusedBeforeAnythingIsAllocated) {
  Fixture f = MakeProfiler();
  std::vector<OpSignature> many(ProfilerOptions().max_signatures_per_request + 1, Relu(4));
  auto batch = f.profiler->MeasureBatch(Request(many));
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(batch.status().message().find("--max_batch_signatures"), std::string::npos) << batch.status();
  EXPECT_EQ(f.backend->calls, 0);
  // 2^40 elements in one tensor: that entry is refused, the others measured.
  auto r = f.profiler->MeasureBatch(Request({Relu(int64_t{1} << 40), Relu(4)}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->results(0).has_error());
  EXPECT_EQ(r->results(0).error().code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_NE(r->results(0).error().message().find("--max_signature_tensor_mb"), std::string::npos);
  EXPECT_FALSE(r->results(1).has_error());
  EXPECT_EQ(f.backend->calls, 1);
}

TEST(ProfilerTest, RequestsAskingForMoreTimingThanTheLimitsAreRefused) {
  Fixture f = MakeProfiler();
  MeasureRequest batch = Request({Relu(4)});
  batch.set_min_repetitions(ProfilerOptions().max_request_runs + 1);
  auto refused = f.profiler->MeasureBatch(batch);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--max_request_runs"), std::string::npos) << refused.status();
  EXPECT_EQ(f.backend->calls, 0);
  for (int which = 0; which < 3; ++which) {
    MeasureGraphRequest graph;
    graph.add_graphs();
    if (which == 0) graph.set_warmup(ProfilerOptions().max_request_runs + 1);
    if (which == 1) graph.set_min_runs(ProfilerOptions().max_request_runs + 1);
    if (which == 2) graph.set_min_timed_ms(ProfilerOptions().max_request_timed_ms * 2);
    auto over = f.profiler->MeasureGraph(graph);
    EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument) << which;
    EXPECT_NE(over.status().message().find("--max_request"), std::string::npos) << over.status();
  }
  batch.set_min_repetitions(ProfilerOptions().max_request_runs);  // at the limit: measured
  EXPECT_TRUE(f.profiler->MeasureBatch(batch).ok());
}

TEST(ProfilerTest, ListPagesAndFiltersAndInvalidates) {
  Fixture f = MakeProfiler();
  std::vector<OpSignature> sigs;
  for (int n = 1; n <= 5; ++n) sigs.push_back(Relu(n));
  sigs.push_back(Conv(2));
  ASSERT_TRUE(f.profiler->MeasureBatch(Request(sigs)).ok());

  ListCacheRequest list;
  list.set_page_size(4);
  auto page1 = f.profiler->ListCache(list);
  ASSERT_TRUE(page1.ok()) << page1.status();
  EXPECT_EQ(page1->entries_size(), 4);
  ASSERT_FALSE(page1->next_page_token().empty());
  list.set_page_token(page1->next_page_token());
  auto page2 = f.profiler->ListCache(list);
  ASSERT_TRUE(page2.ok());
  EXPECT_EQ(page2->entries_size(), 2);
  EXPECT_TRUE(page2->next_page_token().empty());

  ListCacheRequest convs;
  convs.set_kind(ir::OP_CONV2D);
  EXPECT_EQ(f.profiler->ListCache(convs)->entries_size(), 1);
  ListCacheRequest other_device;
  other_device.set_device("another device");
  EXPECT_EQ(f.profiler->ListCache(other_device)->entries_size(), 0);

  InvalidateCacheRequest nothing;  // no signatures, not `all`: removes nothing
  EXPECT_EQ(f.profiler->InvalidateCache(nothing)->removed(), 0);
  InvalidateCacheRequest one;
  *one.add_signatures() = Relu(3);
  EXPECT_EQ(f.profiler->InvalidateCache(one)->removed(), 1);
  InvalidateCacheRequest wrong_device;
  wrong_device.set_all(true);
  wrong_device.set_device("another device");
  EXPECT_EQ(f.profiler->InvalidateCache(wrong_device)->removed(), 0);
  InvalidateCacheRequest all_here;
  all_here.set_all(true);
  all_here.set_backend(BACKEND_CPU);
  all_here.set_device("test cpu");
  EXPECT_EQ(f.profiler->InvalidateCache(all_here)->removed(), 5);
  EXPECT_EQ(f.profiler->ListCache(ListCacheRequest())->entries_size(), 0);

  ListCacheRequest bad_token;
  bad_token.set_page_token("not a token!");
  EXPECT_EQ(f.profiler->ListCache(bad_token).status().code(), absl::StatusCode::kInvalidArgument);
}

// Without a GPU and without ONNX Runtime (its worker missing), auto is the
// cpu backend, and the response says why it stands in.
TEST(ProfilerTest, RealCpuBackendByDefaultWithoutAGpuOrOnnxRuntime) {
  ProfilerOptions options;
  options.cache_dir = absl::StrCat(::testing::TempDir(), "/real_cache");
  options.cpu.threads = 1;
  options.ort.worker.script = "/nonexistent/worker.js";
  options.timing = {.warmup = 1, .repetitions = 5, .min_timed_ms = 1};
  auto p = CostProfiler::Create(options);
  ASSERT_TRUE(p.ok()) << p.status();
  std::cout << (*p)->DescribeBackends();
  auto backend = (*p)->ResolveBackend(BACKEND_UNSPECIFIED);
  ASSERT_TRUE(backend.ok());
  if ((*backend)->kind() == BACKEND_CUDA) GTEST_SKIP() << "a GPU is present: the default backend is cuda";
  auto r = (*p)->MeasureBatch(Request({Conv(8), Relu(64)}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->backend(), BACKEND_CPU);
  EXPECT_EQ(r->threads(), 1);
  EXPECT_NE(r->backend_choice().find("ONNX Runtime is unavailable here"), std::string::npos) << r->backend_choice();
  EXPECT_NE(r->backend_choice().find("/nonexistent/worker.js"), std::string::npos) << r->backend_choice();
  for (const auto& result : r->results()) {
    ASSERT_TRUE(result.has_cost()) << result.error().message();
    EXPECT_EQ(result.cost().backend(), BACKEND_CPU);
    EXPECT_GT(result.cost().median_ms(), 0);
    EXPECT_GE(result.cost().repetitions(), 5);
    EXPECT_NE(result.cost().device().find("oneDNN"), std::string::npos);
  }
  MeasureRequest analytic = Request({Conv(8)});
  analytic.set_backend(BACKEND_ANALYTIC);
  auto estimate = (*p)->MeasureBatch(analytic);
  ASSERT_TRUE(estimate.ok()) << estimate.status();
  ASSERT_TRUE(estimate->results(0).has_cost());
  EXPECT_TRUE(estimate->results(0).cost().is_estimate());
  EXPECT_EQ(estimate->results(0).cost().backend(), BACKEND_ANALYTIC);
  EXPECT_EQ(estimate->backend_choice(), "") << "a backend asked for is not a choice";

  // The cpu backend's threads are the process's: a request for its own count
  // is served, another is refused saying which backend takes any.
  MeasureRequest own = Request({Relu(64)});
  own.set_threads(1);
  auto served = (*p)->MeasureBatch(own);
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ(served->threads(), 1);
  MeasureRequest other = Request({Relu(64)});
  other.set_threads(2);
  auto refused = (*p)->MeasureBatch(other);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_NE(refused.status().message().find("ort backend takes a thread count"), std::string::npos)
      << refused.status();
  MeasureRequest negative = Request({Relu(64)});
  negative.set_threads(-1);
  EXPECT_EQ((*p)->MeasureBatch(negative).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taso::profiler
