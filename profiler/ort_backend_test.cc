// The ort backend: its errors when node or the worker is missing, and real
// measurements in ONNX Runtime where node and profiler/ort/node_modules exist
// (deploy/setup.sh installs both; each case that needs them skips saying
// which is missing). The models it writes: ort_model_test.cc.
#include "profiler/ort/ort_backend.h"

#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "costs/host_cpus.h"
#include "costs/signature_test_util.h"
#include "nlohmann/json.hpp"
#include "profiler/ort/ort_model.h"
#include "profiler/profiler.h"
#include "testing/graph_builder.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::ConvParams;
using ::taso::testing::F32;
using ::taso::testing::GraphBuilder;
using ::taso::testing::Strided;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(OrtBackendTest, MissingNodeIsAFailedPreconditionSayingWhatToInstall) {
  OrtBackendOptions options;
  options.worker.node = "taso-no-such-node-binary";
  auto backend = OrtBackend::Create(options);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kFailedPrecondition) << backend.status();
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("install node and run deploy/setup.sh"));
}

TEST(OrtBackendTest, MissingWorkerIsAFailedPrecondition) {
  OrtBackendOptions options;
  options.worker.script = "/nonexistent/profiler/ort/worker.js";
  auto backend = OrtBackend::Create(options);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kFailedPrecondition) << backend.status();
  EXPECT_THAT(std::string(backend.status().message()), HasSubstr("deploy/setup.sh"));
}

TEST(OrtBackendTest, BadLevelNameIsRejected) {
  EXPECT_EQ(OrtOptimizationLevelFromName("all"), OrtOptimizationLevel::kAll);
  EXPECT_EQ(OrtOptimizationLevelFromName("bogus"), std::nullopt);
}

TEST(OrtBackendTest, TimingAnOperatorNoTimesIsRejected) {
  OrtBackendOptions options;
  options.timings = 0;
  auto backend = OrtBackend::Create(options);
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument) << backend.status();
  auto flags = OrtBackendOptionsFromFlags("", 0, "all", 600, 8, /*timings=*/0);
  EXPECT_EQ(flags.status().code(), absl::StatusCode::kInvalidArgument) << flags.status();
  EXPECT_THAT(std::string(flags.status().message()), HasSubstr("--ort_timings"));
  flags = OrtBackendOptionsFromFlags("", 0, "all", 600, 8, /*timings=*/3);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->timings, 3);
}

// A profiler without CUDA, whose ort backend runs the models given.
ProfilerOptions CpuProfilerOptions() {
  ProfilerOptions options;
  options.enable_cuda = false;
  return options;
}

// The same, timing operators briefly: for tests of what answers, not of the figure.
ProfilerOptions QuickProfilerOptions() {
  ProfilerOptions options = CpuProfilerOptions();
  options.timing.repetitions = 10;
  options.timing.min_timed_ms = 2;
  return options;
}

// One relu asked of the ort backend at `threads` (0: the profiler's own count).
absl::StatusOr<MeasureResponse> MeasureReluInOrt(CostProfiler& profiler, int threads) {
  MeasureRequest request;
  request.set_backend(BACKEND_ORT_CPU);
  request.set_threads(threads);
  *request.add_signatures() = SignatureToProto(Signature{OpKind::kRelu, {}, {F32({1, 4096})}});
  return profiler.MeasureBatch(request);
}

// Few runs: enough for a sane figure, not for a precise one.
TimingOptions QuickTiming() {
  TimingOptions t;
  t.warmup = 3;
  t.repetitions = 20;
  t.min_timed_ms = 5;
  return t;
}

// The real backend, or a skip naming what is missing.
class OrtMeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = OrtBackend::Create(OrtBackendOptions{});
    if (!created.ok() && created.status().code() == absl::StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << "ONNX Runtime is not available here: " << created.status().message();
    }
    ASSERT_TRUE(created.ok()) << created.status();
    backend_ = std::move(*created);
  }

  TimingOptions Quick() const { return QuickTiming(); }

  std::unique_ptr<OrtBackend> backend_;
};

// A started ORT worker, or a skip naming what is missing.
class OrtWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hello = worker_.Call({{"cmd", "hello"}});
    if (!hello.ok() && hello.status().code() == absl::StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << "ONNX Runtime is not available here: " << hello.status().message();
    }
    ASSERT_TRUE(hello.ok()) << hello.status();
    hello_ = *hello;
  }

  // Where a test writes its models.
  static std::string TestDir() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    return tmp ? std::string(tmp) : ::testing::TempDir();
  }

  // The worker's result for `graph`, written as `file` and run 3 times at 2
  // threads with its session alone.
  absl::StatusOr<nlohmann::json> TimeAtTwoThreads(const Graph& graph, const std::string& file) {
    auto model = TimingModel(graph);
    if (!model.ok()) return model.status();
    const std::string path = TestDir() + "/" + file;
    std::ofstream(path, std::ios::binary) << *model;
    nlohmann::json request = {{"cmd", "time"}, {"models", {path}}, {"threads", 2},   {"level", "all"},
                              {"warmup", 1},   {"min_runs", 3},    {"max_runs", 3},  {"min_ms", 0},
                              {"seed", 1},     {"one_session", true}};
    auto answer = worker_.Call(request);
    if (!answer.ok()) return answer.status();
    const nlohmann::json& result = (*answer)["results"][0];
    if (!result.value("ok", false)) return absl::InternalError(result.dump());
    return result;
  }

  OrtWorker worker_{OrtWorkerOptions{}};
  nlohmann::json hello_;  // the worker's first answer
};

TEST_F(OrtWorkerTest, AWorkerThatDiesIsRestartedAndAnswers) {
  const pid_t before = worker_.pid();
  ASSERT_GT(before, 0);
  ASSERT_EQ(kill(before, SIGKILL), 0);
  auto second = worker_.Call({{"cmd", "hello"}});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(worker_.pid(), before);
  EXPECT_EQ(second->value("ort_version", ""), hello_.value("ort_version", ""));
  // A command the worker does not know is its error, not a dead worker.
  auto unknown = worker_.Call({{"cmd", "bogus"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unknown command"));
}

TEST_F(OrtMeasureTest, DeviceNamesRuntimeThreadsLevelAndCpu) {
  const std::string& d = backend_->device();
  EXPECT_THAT(d, HasSubstr("onnxruntime 1."));
  EXPECT_THAT(d, HasSubstr("cpu EP"));
  // Unset, the count is ONNX Runtime's own: one per physical core.
  const int threads = RuntimeDefaultThreads();
  EXPECT_THAT(d, HasSubstr(absl::StrCat(threads, " intra-op thread", threads == 1 ? "," : "s,")));
  EXPECT_EQ(backend_->threads(), threads);
  EXPECT_THAT(d, HasSubstr("level all"));
  EXPECT_THAT(d, HasSubstr("cpus"));
  // Each operator timed twice by default (timings_per_operator), which the
  // device names: costs timed once are not served for it.
  EXPECT_EQ(backend_->timings_per_operator(), 2);
  EXPECT_THAT(d, HasSubstr("fastest of 2"));
  EXPECT_EQ(backend_->kind(), BACKEND_ORT_CPU);
}

TEST_F(OrtMeasureTest, MatmulAndConvTakePositiveSaneTimes) {
  auto mm = backend_->Measure(MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 512})}), Quick());
  ASSERT_TRUE(mm.ok()) << mm.status();
  // 0.5 MFLOP: well above 0 and far below 50 ms on any CPU that runs the tests.
  EXPECT_GT(mm->median_ms, 0);
  EXPECT_LT(mm->median_ms, 50);
  EXPECT_GE(mm->repetitions, 20);
  EXPECT_THAT(mm->kernel, HasSubstr("MatMul"));

  auto conv = backend_->Measure(MustCanonicalize(OpKind::kConv2D, ConvParams(1, Padding::kSame, Activation::kRelu),
                                          {F32({1, 32, 28, 28}), F32({32, 32, 3, 3})}),
                                Quick());
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_GT(conv->median_ms, 0);
  EXPECT_LT(conv->median_ms, 500);
  EXPECT_THAT(conv->kernel, HasSubstr("Conv"));
  // 14.5 MFLOP against 0.5: the conv must measure slower than the small matmul.
  EXPECT_GT(conv->median_ms, mm->median_ms);
}

// Exported as Gemm and Relu, which ONNX Runtime runs as one fused kernel.
TEST_F(OrtMeasureTest, FusedGemmRunsAsOneKernel) {
  OpParams relu;
  relu.activation = Activation::kRelu;
  auto m = backend_->Measure(MustCanonicalize(OpKind::kFusedGemm, relu, {F32({1, 512}), F32({512, 512}), F32({512})}),
                             Quick());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT(m->median_ms, 0);
  EXPECT_LT(m->median_ms, 50);
  EXPECT_THAT(m->kernel, HasSubstr("Gemm"));
  EXPECT_THAT(m->kernel, ::testing::Not(HasSubstr("Relu")));
}

TEST_F(OrtMeasureTest, SplitIsACopyKernelAndStridedTransposeAView) {
  EXPECT_FALSE(backend_->splits_are_views());
  OpParams halves = testing::Axis(1);
  halves.sizes = {256, 256};
  auto split = backend_->Measure(MustCanonicalize(OpKind::kSplit, halves, {F32({1, 512})}), Quick());
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_GT(split->median_ms, 0);
  EXPECT_THAT(split->kernel, HasSubstr("Split"));
  auto view = backend_->Measure(MustCanonicalize(OpKind::kTranspose, testing::Perm({1, 0}, /*shuffle=*/false), {F32({8, 4})}),
                                Quick());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->median_ms, 0);
}

// A 64- and a 1024-wide matmul + tanh, weights without values, timed
// together: runs, kernels and a median per pass for each, the larger the
// slower in every pass.
void ExpectTwoGraphsTimedInPasses(OrtBackend& backend) {
  GraphBuilder small, large;
  for (auto* b : {&small, &large}) {
    const int64_t n = b == &small ? 64 : 1024;
    TensorRef x = b->In("x", {1, n});
    b->Out(b->Op(OpKind::kTanh, {b->Op(OpKind::kMatMul, {x, b->W("w", {n, n})})}));
  }
  GraphTimingOptions timing;
  timing.warmup = 2;
  timing.runs = 10;
  timing.min_timed_ms = 5;
  auto results = backend.MeasureGraphs({&small.graph, &large.graph}, timing, nullptr);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  for (const auto& r : *results) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GT(r->median_ms, 0);
    EXPECT_GE(r->runs, 10);
    EXPECT_EQ(r->kernels, 2);  // MatMul and Tanh
    EXPECT_EQ(r->opaque_skipped, 0);
    ASSERT_EQ(r->pass_median_ms.size(), 4u) << "one median per pass, two per creation order";
  }
  // 256x the multiply-adds: the large graph must be the slower one, in each order.
  EXPECT_GT((*results)[1]->median_ms, (*results)[0]->median_ms);
  for (size_t pass = 0; pass < (*results)[0]->pass_median_ms.size(); ++pass) {
    EXPECT_GT((*results)[1]->pass_median_ms[pass], (*results)[0]->pass_median_ms[pass]) << "pass " << pass;
  }
}

TEST_F(OrtMeasureTest, TwoGraphsTimedInterleavedWithoutWeightValues) { ExpectTwoGraphsTimedInPasses(*backend_); }

// Above one thread each model is timed with its session the only one alive
// (worker.js "one_session"): the device names the method, and two graphs
// still get their runs, kernels and passes, the larger the slower in each.
TEST(OrtBackendTest, AtTwoThreadsEachModelIsTimedWithItsSessionAlone) {
  OrtBackendOptions options;
  options.threads = 2;
  auto two = OrtBackend::Create(options);
  if (!two.ok() && two.status().code() == absl::StatusCode::kFailedPrecondition) {
    GTEST_SKIP() << "ONNX Runtime is not available here: " << two.status().message();
  }
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_THAT((*two)->device(), HasSubstr("2 intra-op threads"));
  EXPECT_THAT((*two)->device(), HasSubstr("timing ort7"));
  options.threads = 1;
  auto one = OrtBackend::Create(options);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_THAT((*one)->device(), HasSubstr("timing ort3"));

  ExpectTwoGraphsTimedInPasses(**two);
  // An operator is timed against its run-overhead model the same way, and
  // above one thread spread over nodes cycling its 8 weight sets; at one
  // thread, as its 8 copies.
  const CanonicalSignature small = MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 512})});
  auto mm = (*two)->Measure(small, QuickTiming());
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_GT(mm->median_ms, 0);
  EXPECT_LT(mm->median_ms, 50);
  EXPECT_GE(mm->repetitions, 20);
  EXPECT_THAT(mm->kernel,
              HasSubstr(absl::StrCat("per node of ", OrtNodes(small, 8, 1.5, 64, 64), " over 8 weight sets")));
  auto alone = (*one)->Measure(small, QuickTiming());
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_THAT(alone->kernel, HasSubstr("per copy of 8"));
  EXPECT_THAT(alone->kernel, ::testing::Not(HasSubstr("per node")));
}

// ORT runs every node of a spread model, chained or side by side (64 nodes
// over 8 weight sets, each group of 8 reading its own input), so dividing
// the run by the node count is right: it folds none of the chains.
TEST_F(OrtWorkerTest, NodesSharingWeightsAreEachRun) {
  struct Case {
    const char* file;
    CanonicalSignature signature;
    int copies;
  };
  const Case cases[] = {
      {"chain.onnx", MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 512})}), 8},
      {"side.onnx", MustCanonicalize(OpKind::kMatMul, {}, {F32({1, 512}), F32({512, 256})}), 8},
      {"relu.onnx", MustCanonicalize(OpKind::kRelu, {}, {F32({1, 512})}), 1},
      {"add.onnx", MustCanonicalize(OpKind::kEwAdd, {}, {F32({1, 512}), F32({1, 512})}), 1},
      {"sigmoid.onnx", MustCanonicalize(OpKind::kSigmoid, {}, {F32({1, 512})}), 1},
  };
  for (const Case& c : cases) {
    auto m = SignatureGraph(c.signature, c.copies, 64);
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_EQ(m->operators, 64) << c.file;
    auto result = TimeAtTwoThreads(m->graph, c.file);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->value("nodes", 0), 64) << c.file << ": " << result->dump();
  }
}

// A fused activation is exported as its own node after the matmul, so a
// matmul that is not a graph output could be merged with one computing the
// same value: no two nodes read the same input, and ORT runs every matmul
// and every tanh (ort5 shared the input, and 16 of these ran as 10).
TEST_F(OrtWorkerTest, FusedActivationNodesAreEachRun) {
  OpParams tanh;
  tanh.activation = Activation::kTanh;
  for (int64_t out : {256, 128}) {  // chained, and side by side
    auto m = SignatureGraph(MustCanonicalize(OpKind::kMatMul, tanh, {F32({1, 256}), F32({256, out})}), 2, 8);
    ASSERT_TRUE(m.ok()) << m.status();
    auto result = TimeAtTwoThreads(m->graph, absl::StrCat("fused", out, ".onnx"));
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->value("nodes", 0), 16) << result->dump();
  }
}

// The worker's "one_session" timing: every model gets its runs in two turns
// (A B B A) and a model that cannot load fails alone.
TEST_F(OrtWorkerTest, OneSessionAtATimeTimesEachModelInTwoTurns) {
  const std::string dir = TestDir();
  auto model = TimingModel(RunOverheadGraph(1, 1));
  ASSERT_TRUE(model.ok()) << model.status();
  const std::string path = dir + "/overhead.onnx";
  std::ofstream(path, std::ios::binary) << *model;
  nlohmann::json request = {{"cmd", "time"},          {"models", {path, dir + "/missing.onnx", path}},
                            {"threads", 2},           {"level", "all"},
                            {"warmup", 1},            {"min_runs", 7},
                            {"max_runs", 100},        {"min_ms", 0},
                            {"seed", 1},              {"one_session", true}};
  auto answer = worker_.Call(request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  const nlohmann::json& results = (*answer)["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[1].value("ok", true)) << results[1].dump();
  for (int i : {0, 2}) {
    ASSERT_TRUE(results[i].value("ok", false)) << results[i].dump();
    // Two turns of ceil(7 / 2) runs each.
    EXPECT_EQ(results[i]["times_ms"].size(), 8u) << results[i].dump();
    EXPECT_EQ(results[i].value("nodes", 0), 1);
  }
}

TEST_F(OrtMeasureTest, ProfilerServesTheOrtBackendByName) {
  auto profiler = CostProfiler::Create(QuickProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto response = MeasureReluInOrt(**profiler, 0);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_TRUE(response->results(0).has_cost()) << response->results(0).error().message();
  EXPECT_EQ(response->results(0).cost().backend(), BACKEND_ORT_CPU);
  EXPECT_THAT(response->results(0).cost().device(), HasSubstr("onnxruntime"));
  EXPECT_GT(response->results(0).cost().median_ms(), 0);
}

// Without a GPU, auto is the ort backend where ONNX Runtime runs, and the
// response says why.
TEST_F(OrtMeasureTest, AutoIsTheOrtBackendWhereOnnxRuntimeRuns) {
  auto profiler = CostProfiler::Create(QuickProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  MeasureRequest request;
  *request.add_signatures() = SignatureToProto(Signature{OpKind::kRelu, {}, {F32({1, 4096})}});
  auto response = (*profiler)->MeasureBatch(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->backend(), BACKEND_ORT_CPU);
  EXPECT_THAT(response->backend_choice(), HasSubstr("ONNX Runtime runs here"));
  EXPECT_EQ(response->threads(), RuntimeDefaultThreads());
}

// A request's thread count is the configuration its costs are for: the ort
// backend measures each count in a worker of its own, cached apart (the
// device names the count), up to the profiler's limit of counts.
TEST_F(OrtMeasureTest, EachThreadCountIsMeasuredInItsOwnWorkerAndCachedApart) {
  ProfilerOptions options = QuickProfilerOptions();
  options.ort.threads = 1;
  options.max_ort_thread_counts = 1;
  auto profiler = CostProfiler::Create(options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto at = [&](int threads) { return MeasureReluInOrt(**profiler, threads); };
  auto own = at(0);
  ASSERT_TRUE(own.ok()) << own.status();
  ASSERT_TRUE(own->results(0).has_cost()) << own->results(0).error().message();
  EXPECT_EQ(own->threads(), 1);
  EXPECT_THAT(own->device(), HasSubstr(" 1 intra-op thread,"));
  EXPECT_FALSE(own->results(0).cost().from_cache());

  auto one = at(1);  // the profiler's own count, asked by number: the same worker and key
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->device(), own->device());
  EXPECT_TRUE(one->results(0).cost().from_cache());

  auto two = at(2);
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_TRUE(two->results(0).has_cost()) << two->results(0).error().message();
  EXPECT_EQ(two->threads(), 2);
  EXPECT_THAT(two->device(), HasSubstr(" 2 intra-op threads,"));
  EXPECT_THAT(two->results(0).cost().device(), HasSubstr(" 2 intra-op threads,"));
  EXPECT_FALSE(two->results(0).cost().from_cache()) << "a cost at 1 thread must not answer for 2";

  auto three = at(3);  // a second count besides its own: over the limit of 1
  EXPECT_EQ(three.status().code(), absl::StatusCode::kResourceExhausted) << three.status();
  EXPECT_TRUE(at(2).ok()) << "the counts already running stay served";
}

// The real worker behind a wrapper that exits at once while `marker`
// exists: a worker that dies as it starts, as one can on a machine out of
// processes or memory for a moment.
std::string WorkerRefusingWhile(const std::string& marker, const std::string& name) {
  auto real = FindOrtWorker();
  EXPECT_TRUE(real.ok()) << real.status();
  const std::string wrapper = absl::StrCat(::testing::TempDir(), "/", name, ".js");
  std::ofstream out(wrapper);
  out << "if (require('fs').existsSync(" << nlohmann::json(marker).dump() << ")) process.exit(3);\n"
      << "require(" << nlohmann::json(real.ok() ? *real : "").dump() << ");\n";
  return wrapper;
}

// A worker that fails to start at one extra count is that count's failure
// alone: the backend's own count keeps serving, and the count is tried again
// when asked again.
TEST_F(OrtMeasureTest, AWorkerThatFailsAtOneCountLeavesTheOthersServed) {
  const std::string marker = ::testing::TempDir() + "/refuse-to-start";
  ProfilerOptions options = QuickProfilerOptions();
  options.ort.threads = 1;
  options.ort.worker.script = WorkerRefusingWhile(marker, "refusing_worker");
  auto profiler = CostProfiler::Create(options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  auto at = [&](int threads) { return MeasureReluInOrt(**profiler, threads); };
  ASSERT_TRUE(at(1).ok()) << "the backend's own worker starts";
  { std::ofstream touch(marker); }
  auto refused = at(2);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("at 2 threads"));
  auto own = at(1);
  EXPECT_TRUE(own.ok()) << "the own count is not poisoned: " << own.status();
  std::filesystem::remove(marker);
  auto retried = at(2);
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(retried->threads(), 2);
}

// Nor does the own count's worker failing to start poison the backend for
// the process's life (a server's): the request fails UNAVAILABLE, auto does
// not settle on the cpu backend, and the next request starts a worker.
TEST_F(OrtMeasureTest, AWorkerThatFailsToStartOnceIsStartedOnTheNextRequest) {
  const std::string marker = ::testing::TempDir() + "/refuse-first-start";
  { std::ofstream touch(marker); }
  ProfilerOptions options = QuickProfilerOptions();
  options.ort.worker.script = WorkerRefusingWhile(marker, "refusing_first_worker");
  auto profiler = CostProfiler::Create(options);
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  MeasureRequest automatic;  // no backend named: auto
  *automatic.add_signatures() = SignatureToProto(Signature{OpKind::kRelu, {}, {F32({1, 4096})}});
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto refused = attempt == 0 ? MeasureReluInOrt(**profiler, 0) : (*profiler)->MeasureBatch(automatic);
    ASSERT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("the next request tries again"));
  }
  EXPECT_THAT((*profiler)->DescribeBackends(), Not(HasSubstr("default (auto)"))) << "auto is not settled";
  std::filesystem::remove(marker);
  auto served = (*profiler)->MeasureBatch(automatic);
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ(served->backend(), BACKEND_ORT_CPU);
  ASSERT_TRUE(served->results(0).has_cost()) << served->results(0).error().message();
  EXPECT_THAT(served->backend_choice(), HasSubstr("ONNX Runtime runs here"));
}

// The never-slower check under --backend ort times the files a user runs:
// ONNX models given as bytes are timed interleaved, a model ORT cannot load
// fails alone, and graphs and models in one request are refused.
TEST_F(OrtMeasureTest, OnnxModelsAreTimedAsFilesThroughMeasureGraph) {
  GraphBuilder small, large;
  for (auto* b : {&small, &large}) {
    const int64_t n = b == &small ? 64 : 1024;
    TensorRef x = b->In("x", {1, n});
    b->Out(b->Op(OpKind::kTanh, {b->Op(OpKind::kMatMul, {x, b->W("w", {n, n})})}));
  }
  auto small_model = TimingModel(small.graph), large_model = TimingModel(large.graph);
  ASSERT_TRUE(small_model.ok()) << small_model.status();
  ASSERT_TRUE(large_model.ok()) << large_model.status();
  auto profiler = CostProfiler::Create(CpuProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  MeasureGraphRequest request;
  request.set_backend(BACKEND_ORT_CPU);
  request.add_onnx_models(*small_model);
  request.add_onnx_models(*large_model);
  request.add_onnx_models("not an ONNX model");
  request.set_min_runs(10);
  auto response = (*profiler)->MeasureGraph(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->results_size(), 3);
  EXPECT_TRUE(response->interleaved());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(response->results(i).has_measurement()) << response->results(i).error().message();
    const GraphMeasurement& m = response->results(i).measurement();
    EXPECT_GT(m.median_ms(), 0);
    EXPECT_GE(m.runs(), 10);
    EXPECT_EQ(m.backend(), BACKEND_ORT_CPU);
    EXPECT_FALSE(m.from_cache());
  }
  EXPECT_GT(response->results(1).measurement().median_ms(), response->results(0).measurement().median_ms());
  ASSERT_TRUE(response->results(2).has_error());
  EXPECT_THAT(response->results(2).error().message(), HasSubstr("ONNX Runtime cannot run it"));

  *request.add_graphs() = GraphToProto(small.graph, /*weight_data=*/false);
  auto both = (*profiler)->MeasureGraph(request);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument);
}

// A model larger than one message comes as a file path, its data beside it
// (the embedded optimizer's never-slower step; external_data_test runs one):
// timed and compared as bytes are, and the caller's file is left in place.
TEST_F(OrtMeasureTest, OnnxModelPathsAreReadWithTheirExternalData) {
  GraphBuilder b;
  TensorRef x = b.In("x", {1, 256});
  b.Out(b.Op(OpKind::kTanh, {b.Op(OpKind::kMatMul, {x, b.W("w", {256, 256})})}));
  auto model = TimingModel(b.graph);
  ASSERT_TRUE(model.ok()) << model.status();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/model_paths";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/m.onnx";
  std::ofstream(path, std::ios::binary) << *model;

  auto profiler = CostProfiler::Create(CpuProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  MeasureGraphRequest request;
  request.set_backend(BACKEND_ORT_CPU);
  request.add_onnx_model_paths(path);
  request.add_onnx_model_paths(path);
  request.set_min_runs(4);
  request.set_compare_outputs(true);
  auto response = (*profiler)->MeasureGraph(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->results_size(), 2);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(response->results(i).has_measurement()) << response->results(i).error().message();
    EXPECT_GT(response->results(i).measurement().median_ms(), 0);
  }
  ASSERT_EQ(response->comparisons_size(), 1);
  EXPECT_EQ(response->comparisons(0).failure(), ModelComparison::COMPARED) << response->comparisons(0).error();
  EXPECT_TRUE(std::filesystem::exists(path));

  request.add_onnx_models(*model);  // bytes and paths in one request
  auto mixed = (*profiler)->MeasureGraph(request);
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("only one of them"));
}

// compare_outputs: every later model run on the first one's inputs and its
// outputs compared with the first's, output by output; the timing stands.
TEST_F(OrtMeasureTest, OnnxModelsOutputsAreComparedOnTheFirstModelsInputs) {
  GraphBuilder tanh, sigmoid;
  for (auto* b : {&tanh, &sigmoid}) {
    TensorRef x = b->In("x", {4, 64});
    b->Out(b->Op(b == &tanh ? OpKind::kTanh : OpKind::kSigmoid, {b->Op(OpKind::kMatMul, {x, b->W("w", {64, 64})})}));
  }
  auto tanh_model = TimingModel(tanh.graph), sigmoid_model = TimingModel(sigmoid.graph);
  ASSERT_TRUE(tanh_model.ok()) << tanh_model.status();
  ASSERT_TRUE(sigmoid_model.ok()) << sigmoid_model.status();
  auto profiler = CostProfiler::Create(CpuProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  MeasureGraphRequest request;
  request.set_backend(BACKEND_ORT_CPU);
  request.set_min_runs(4);
  for (const std::string* m : {&*tanh_model, &*tanh_model, &*sigmoid_model}) request.add_onnx_models(*m);
  request.add_onnx_models("not an ONNX model");
  auto response = (*profiler)->MeasureGraph(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->comparisons_size(), 0) << "only when asked";

  request.set_compare_outputs(true);
  request.set_compare_seed(7);
  response = (*profiler)->MeasureGraph(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->results_size(), 4);
  EXPECT_TRUE(response->results(1).has_measurement()) << "still timed";
  ASSERT_EQ(response->comparisons_size(), 3);
  // The same model: equal to the last bit.
  const ModelComparison& same = response->comparisons(0);
  ASSERT_EQ(same.failure(), ModelComparison::COMPARED) << same.error();
  ASSERT_EQ(same.outputs_size(), 1);
  EXPECT_EQ(same.outputs(0).name(), "out0");
  EXPECT_EQ(same.outputs(0).elements(), 4 * 64);
  EXPECT_FALSE(same.outputs(0).exact());
  EXPECT_EQ(same.outputs(0).max_abs_error(), 0);
  EXPECT_EQ(same.outputs(0).max_rel_error(), 0);
  EXPECT_EQ(same.outputs(0).differing(), 0);
  EXPECT_TRUE(same.outputs(0).mismatch().empty());
  // Sigmoid for tanh: every element differs, by sigmoid(v) - tanh(v).
  const OutputDifference& other = response->comparisons(1).outputs(0);
  EXPECT_EQ(other.differing(), 4 * 64);
  EXPECT_GT(other.max_abs_error(), 0.1);
  EXPECT_GT(other.max_abs_error(), other.max_rel_error());
  EXPECT_NEAR(std::abs(other.worst_value() - other.worst_reference()) / (1 + std::abs(other.worst_reference())),
              other.max_rel_error(), 1e-6);
  // A model that does not load fails alone.
  EXPECT_EQ(response->comparisons(2).failure(), ModelComparison::MODEL_FAILED);
  EXPECT_THAT(response->comparisons(2).error(), HasSubstr("ONNX Runtime cannot run it"));

  // Nothing to compare with when the first does not run.
  MeasureGraphRequest broken_first;
  broken_first.set_backend(BACKEND_ORT_CPU);
  broken_first.set_min_runs(4);
  broken_first.set_compare_outputs(true);
  broken_first.add_onnx_models("not an ONNX model");
  broken_first.add_onnx_models(*tanh_model);
  response = (*profiler)->MeasureGraph(broken_first);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->comparisons_size(), 1);
  EXPECT_EQ(response->comparisons(0).failure(), ModelComparison::REFERENCE_FAILED);
  EXPECT_THAT(response->comparisons(0).error(), HasSubstr("cannot run the first model"));
}

TEST(OrtBackendTest, OtherBackendsRefuseOnnxModelsAsUnimplemented) {
  auto profiler = CostProfiler::Create(CpuProfilerOptions());
  ASSERT_TRUE(profiler.ok()) << profiler.status();
  MeasureGraphRequest request;
  request.set_backend(BACKEND_CPU);
  request.add_onnx_models("bytes");
  auto response = (*profiler)->MeasureGraph(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnimplemented) << response.status();
  EXPECT_THAT(response.status().message(), HasSubstr("--backend ort"));
}

}  // namespace
}  // namespace taso::profiler
