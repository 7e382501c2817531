#include "profiler/weight_stream_probe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "core/random_inputs.h"

namespace taso::profiler {
namespace {

constexpr int64_t kWidth = 512;
constexpr int64_t kMatmulWeightBytes = kWidth * kWidth * 4;

}  // namespace

Graph WeightChainGraph(int matmuls) {
  Graph graph;
  TensorRef x = graph.AddInput("x", TensorType::RowMajor(DType::kFloat32, {1, kWidth}));
  // Uniform in [-s, s] with s = sqrt(3 / 512) keeps every link's output as
  // large as its input: runtimes fill weights without data uniformly in
  // [-1, 1], and a long chain of those overflows to inf and NaN, which some
  // CPUs compute slower than plain values.
  const float scale = std::sqrt(3.0f / static_cast<float>(kWidth));
  for (int i = 0; i < matmuls; ++i) {
    const std::string name = absl::StrCat("w", i);
    auto data = std::make_shared<std::string>(kMatmulWeightBytes, '\0');
    RandomStream stream(name, /*seed=*/1);
    for (int64_t j = 0; j < kWidth * kWidth; ++j) {
      const float unit = static_cast<float>(stream.Next() >> 40) / static_cast<float>(1 << 24);  // [0, 1)
      const float value = (2 * unit - 1) * scale;
      std::memcpy(data->data() + j * 4, &value, 4);
    }
    TensorRef w = graph.AddWeight(name, TensorType::RowMajor(DType::kFloat32, {kWidth, kWidth}), std::move(data));
    // Shapes are fixed and valid: AddOp cannot fail here.
    x = (*graph.AddOp(OpKind::kMatMul, OpParams{}, {x, w}))[0];
  }
  graph.AddOutput("y", x);
  return graph;
}

std::vector<double> DefaultWeightFractions(int64_t cache_bytes) {
  std::vector<double> fractions = {0.25, 0.5, 0.625, 0.75, 0.875, 1, 1.25, 1.5, 2};
  // Past twice the cache only where the chains stay small enough to hold
  // (and copy) in memory: 3 and 4 times a 256 MiB cache would be 1 GiB.
  for (double f : {3.0, 4.0}) {
    if (f * static_cast<double>(cache_bytes) <= static_cast<double>(int64_t{512} << 20)) fractions.push_back(f);
  }
  return fractions;
}

absl::StatusOr<WeightStreamFit> FitWeightStreaming(int64_t cache_bytes, std::vector<WeightRate> rates) {
  std::sort(rates.begin(), rates.end(), [](const WeightRate& a, const WeightRate& b) { return a.fraction < b.fraction; });
  WeightStreamFit fit;
  fit.cache_bytes = cache_bytes;
  fit.rates = rates;
  double cached = 0;
  int in_cache = 0;
  std::vector<double> streaming;
  for (const WeightRate& r : rates) {
    if (r.fraction <= 0.25) cached = in_cache++ == 0 ? r.ms_per_mb : std::min(cached, r.ms_per_mb);
    if (r.fraction >= 2) streaming.push_back(r.ms_per_mb);
  }
  if (cache_bytes <= 0 || in_cache == 0 || streaming.empty()) {
    return absl::InvalidArgumentError(
        "the weight probe needs a cache size > 0 and weights of <= 0.25 and >= 2 times the cache");
  }
  fit.cached_ms_per_mb = cached;
  // The median: one slow session among the largest chains moves a mean.
  std::sort(streaming.begin(), streaming.end());
  const size_t mid = streaming.size() / 2;
  fit.memory_ms_per_mb = streaming.size() % 2 ? streaming[mid] : (streaming[mid - 1] + streaming[mid]) / 2;
  const double extra = fit.memory_ms_per_mb - cached;
  // Streaming no slower than cached (within 5 %): nothing to charge.
  if (!(extra > 0.05 * fit.memory_ms_per_mb)) return fit;
  fit.weight_stream_mb_ms = extra;
  double paid = 0;
  for (const WeightRate& r : rates) {
    // More weights never stream less: a slower small chain is noise.
    paid = std::max(paid, std::clamp((r.ms_per_mb - cached) / extra, 0.0, 1.0));
    fit.spill.emplace_back(r.fraction, paid);
  }
  return fit;
}

absl::StatusOr<WeightStreamFit> ProbeWeightStreaming(ProfilerClient& client, Backend backend, int64_t cache_bytes,
                                                     const std::vector<double>& fractions, int min_runs) {
  if (cache_bytes <= 0) {
    return absl::InvalidArgumentError("the weight probe needs the last-level cache's size, and sysfs gave none");
  }
  auto measure = [&](int matmuls) -> absl::StatusOr<double> {
    MeasureGraphRequest request;
    request.set_backend(backend);
    request.set_min_runs(min_runs);
    request.set_bypass_cache(true);  // the point is this machine now
    *request.add_graphs() = GraphToProto(WeightChainGraph(matmuls), /*weight_data=*/true);
    auto response = client.MeasureGraph(request);
    if (!response.ok()) return response.status();
    if (response->results_size() != 1) {
      return absl::InternalError(absl::StrCat(client.Describe(), " answered ", response->results_size(),
                                              " results for one graph"));
    }
    const GraphMeasureResult& r = response->results(0);
    if (r.has_error()) {
      return absl::Status(static_cast<absl::StatusCode>(r.error().code()),
                          absl::StrCat("measuring a chain of ", matmuls, " matmuls: ", r.error().message()));
    }
    return r.measurement().median_ms();
  };
  std::vector<int> matmuls;
  for (double f : fractions) {
    matmuls.push_back(std::max(1, static_cast<int>(std::lround(f * static_cast<double>(cache_bytes) /
                                                               static_cast<double>(kMatmulWeightBytes)))));
  }
  // Every size is measured in three sweeps over all of them and its median
  // kept: sessions of one size differ more than runs within one.
  constexpr int kSweeps = 3;
  std::vector<std::vector<double>> times(matmuls.size());
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    for (size_t k = 0; k < matmuls.size(); ++k) {
      auto ms = measure(matmuls[k]);
      if (!ms.ok()) return ms.status();
      times[k].push_back(*ms);
    }
  }
  std::vector<WeightRate> rates;
  for (size_t k = 0; k < matmuls.size(); ++k) {
    std::vector<double>& t = times[k];
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    const int64_t bytes = matmuls[k] * kMatmulWeightBytes;
    rates.push_back(WeightRate{static_cast<double>(bytes) / static_cast<double>(cache_bytes), bytes, matmuls[k],
                               t[t.size() / 2] / (static_cast<double>(bytes) / 1e6)});
  }
  return FitWeightStreaming(cache_bytes, std::move(rates));
}

}  // namespace taso::profiler
