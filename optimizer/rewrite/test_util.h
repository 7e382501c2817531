// What the optimizer's tests share: building rules and graphs, checking two
// graphs compute the same, and a deterministic in-process profiler.
#ifndef TASO_OPTIMIZER_REWRITE_TEST_UTIL_H_
#define TASO_OPTIMIZER_REWRITE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/proof_signature.h"
#include "testing/tensor_types.h"
#include "optimizer/rewrite/rewrite_rule.h"
#include "gtest/gtest.h"
#include "costs/client.h"
#include "proto/rules.pb.h"

namespace taso::optimizer::testing {

using ::taso::testing::F32;

// A proved rule from two sides whose outputs pair up in order, with the side
// conditions a verifier records: the sides' own signatures, the facts `open`
// names left open as its generalised proof would (prover_test shows it does
// for the rules the tests use).
rules::Rule MakeRule(const std::string& id, const Graph& source, const Graph& target,
                     OpenFacts open = OpenFacts::kNone);

// The rule's rewrites: both directions (empty, with a gtest failure, when it
// does not convert), or only the first (source to target).
std::vector<RewriteRule> BothWays(const rules::Rule& rule);
RewriteRule Forward(const rules::Rule& rule);

// matmul(x, w1) and matmul(x, w2) => split(matmul(x, concat(w1, w2))), id "mm2".
rules::Rule SharedInputMatMuls();

// matmul(x, p) and matmul(x, q) as outputs "a" and "b": what "mm2" merges.
Graph SharedInputMatMulHost();

// (matmul(x, w), matmul(z, w)) => split(matmul(concat0(x, z), w)), id "rows".
rules::Rule RowsMatMuls();

// b = matmul(relu(matmul(x, w)), w): "rows" matches it only with z computed
// from a, which the rewrite replaces, so every application is cyclic.
Graph RowsMatMulCycleHost();

// relu(conv(x, w)), w a weight, the conv padded 1 with stride 2; optionally
// the conv is an output too.
Graph ConvRelu(bool conv_is_output = false);

// `b` validates and gives `a`'s outputs on random inputs and weights
// (gtest failures otherwise).
void ExpectEquivalent(const Graph& a, const Graph& b);

// The profiler with the analytic H100 model: fast and deterministic.
std::unique_ptr<profiler::ProfilerClient> AnalyticProfiler();

// A test double over another profiler: forwards every call, so a double
// overrides only what it changes.
class ForwardingProfiler : public profiler::ProfilerClient {
 public:
  explicit ForwardingProfiler(std::unique_ptr<profiler::ProfilerClient> owned)
      : owned_(std::move(owned)), inner_(owned_.get()) {}
  explicit ForwardingProfiler(profiler::ProfilerClient* borrowed) : inner_(borrowed) {}
  absl::StatusOr<profiler::MeasureResponse> MeasureBatch(const profiler::MeasureRequest& r) override {
    return inner_->MeasureBatch(r);
  }
  absl::StatusOr<profiler::MeasureGraphResponse> MeasureGraph(const profiler::MeasureGraphRequest& r) override {
    return inner_->MeasureGraph(r);
  }
  absl::StatusOr<profiler::ListCacheResponse> ListCache(const profiler::ListCacheRequest& r) override {
    return inner_->ListCache(r);
  }
  absl::StatusOr<profiler::InvalidateCacheResponse> InvalidateCache(
      const profiler::InvalidateCacheRequest& r) override {
    return inner_->InvalidateCache(r);
  }
  std::string Describe() const override { return inner_->Describe(); }

 protected:
  profiler::ProfilerClient& inner() { return *inner_; }

 private:
  std::unique_ptr<profiler::ProfilerClient> owned_;
  profiler::ProfilerClient* inner_;
};

// A test with that profiler in client_.
class AnalyticProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = AnalyticProfiler();
    ASSERT_NE(client_, nullptr);
  }
  std::unique_ptr<profiler::ProfilerClient> client_;
};

}  // namespace taso::optimizer::testing

#endif  // TASO_OPTIMIZER_REWRITE_TEST_UTIL_H_
