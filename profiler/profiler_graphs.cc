// CostProfiler's whole-graph requests (MeasureGraph): graphs timed end to
// end by a backend's runner, cached by structural hash, or ONNX models timed
// (and compared) as files. The per-operator side is in profiler.cc.
#include "profiler/profiler.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/canonical.h"
#include "core/graph_proto.h"
#include "costs/graph_cost.h"
#include "storage/rocks_status.h"

namespace taso::profiler {
namespace {

// What a whole-graph timing says of the run times, for either request form.
void SetTiming(const GraphTiming& t, Backend backend, const std::string& device, GraphMeasurement& m) {
  m.set_median_ms(t.median_ms);
  m.set_min_ms(t.min_ms);
  m.set_runs(t.runs);
  m.set_kernels(t.kernels);
  m.set_backend(backend);
  m.set_device(device);
  m.clear_pass_median_ms();
  for (double ms : t.pass_median_ms) m.add_pass_median_ms(ms);
}

}  // namespace

absl::StatusOr<std::string> CostProfiler::GraphKeyAndLimits(const Graph& graph, ViewPolicy views) const {
  if (graph.num_nodes() > options_.max_graph_nodes) {
    return absl::InvalidArgumentError(absl::StrCat("graph has ", graph.num_nodes(), " nodes, over the limit of ",
                                                   options_.max_graph_nodes, " (taso_profiler --max_graph_nodes)"));
  }
  int64_t bytes = 0;
  // Each term is at most INT64_MAX / 4 (TensorBytes' cap), so clamping there keeps the sum in range.
  for (const Node& n : graph.nodes()) {
    bytes = std::min(bytes + TensorBytes(n.output_types), std::numeric_limits<int64_t>::max() / 4);
  }
  if (bytes > options_.max_graph_tensor_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "graph's tensors take ", bytes >> 20, " MiB, over the limit of ", options_.max_graph_tensor_bytes >> 20,
        " MiB (taso_profiler --max_graph_tensor_mb)"));
  }
  auto hash = StructuralHash(graph);
  if (!hash.ok()) return absl::InvalidArgumentError(absl::StrCat("invalid graph: ", hash.status().message()));
  // The runner's version is part of the key: a runner that times graphs
  // differently must not be answered with the old figures.
  // So is the view policy; aliasing keeps the key it had before policies
  // existed, whose entries were measured that way.
  return absl::StrCat(absl::Hex(hash->hi, absl::kZeroPad16), absl::Hex(hash->lo, absl::kZeroPad16), "/runner1",
                      views == ViewPolicy::kMaterialize ? "/views=copy" : "");
}

absl::StatusOr<MeasureGraphResponse> CostProfiler::MeasureGraph(const MeasureGraphRequest& request,
                                                               const std::function<bool()>& cancelled) {
  const int models = request.onnx_models_size() + request.onnx_model_paths_size();
  const int given = request.graphs_size() + models;
  if (given == 0) return absl::InvalidArgumentError("MeasureGraph: no graphs or ONNX models given");
  if ((request.graphs_size() > 0) + (request.onnx_models_size() > 0) + (request.onnx_model_paths_size() > 0) > 1) {
    return absl::InvalidArgumentError("MeasureGraph: give graphs, ONNX models or ONNX model paths, only one of them");
  }
  if (given > options_.max_graphs_per_request) {
    return absl::InvalidArgumentError(absl::StrCat("MeasureGraph: ", given, " graphs in one request, over the limit of ",
                                                   options_.max_graphs_per_request));
  }
  if (request.warmup() > options_.max_request_runs || request.min_runs() > options_.max_request_runs ||
      request.min_timed_ms() > options_.max_request_timed_ms) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MeasureGraph: warmup ", request.warmup(), ", min_runs ", request.min_runs(), " and min_timed_ms ",
        request.min_timed_ms(), " must stay within this server's limits of ", options_.max_request_runs, " runs and ",
        options_.max_request_timed_ms, " ms (taso_profiler --max_request_runs, --max_request_timed_ms)"));
  }
  auto backend = ResolveBackend(request.backend(), request.threads());
  if (!backend.ok()) return backend.status();
  GraphTimingOptions timing = options_.graph_timing;
  if (request.warmup() > 0) timing.warmup = request.warmup();
  if (request.min_runs() > 0) {
    timing.runs = request.min_runs();
    timing.max_runs = std::max(timing.max_runs, timing.runs);
  }
  if (request.min_timed_ms() > 0) timing.min_timed_ms = request.min_timed_ms();
  switch (request.views()) {
    case GRAPH_VIEW_POLICY_MATERIALIZE: timing.views = ViewPolicy::kMaterialize; break;
    case GRAPH_VIEW_POLICY_ALIAS: timing.views = ViewPolicy::kAlias; break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("MeasureGraph: unknown view policy ",
                                                     static_cast<int>(request.views()),
                                                     " (GRAPH_VIEW_POLICY_MATERIALIZE or GRAPH_VIEW_POLICY_ALIAS)"));
  }
  if (models > 0) return MeasureOnnxModels(request, **backend, timing, cancelled);
  const bool interleaved = request.graphs_size() > 1;

  MeasureGraphResponse response;
  response.set_interleaved(interleaved);
  const int n = request.graphs_size();
  std::vector<Graph> graphs(n);
  std::vector<std::string> keys(n);
  std::vector<const Graph*> to_measure;
  std::vector<int> measured_index;
  std::vector<GraphMeasurement> partial(n);
  for (int i = 0; i < n; ++i) {
    GraphMeasureResult* result = response.add_results();
    auto graph = GraphFromProto(request.graphs(i));
    absl::StatusOr<std::string> key = graph.ok() ? GraphKeyAndLimits(*graph, timing.views) : absl::StatusOr<std::string>(
        absl::InvalidArgumentError(absl::StrCat("invalid graph: ", graph.status().message())));
    if (!key.ok()) {
      result->mutable_error()->set_code(static_cast<int>(key.status().code()));
      result->mutable_error()->set_message(std::string(key.status().message()));
      continue;
    }
    graphs[i] = std::move(*graph);
    keys[i] = *key;
    if (!interleaved && !request.bypass_cache()) {
      auto cached = cache_->GetGraph((*backend)->kind(), (*backend)->device(), keys[i]);
      if (!cached.ok()) return cached.status();
      if (cached->has_value()) {
        ++hits_;
        *result->mutable_measurement() = **cached;
        result->mutable_measurement()->set_from_cache(true);
        continue;
      }
    }
    // The per-operator sum first: its measurements never overlap the timing.
    auto sum = SumOperatorCosts(
        graphs[i], [&](const MeasureRequest& r) { return MeasureBatch(r, cancelled); }, "the profiler",
        (*backend)->kind(), /*bypass_cache=*/false, (*backend)->threads());
    if (!sum.ok()) return sum.status();
    // What the runner runs: not the operators ONNX Runtime measured for the
    // cpu backend (opaque ones, which its runner skips).
    partial[i].set_operator_sum_ms(sum->total_ms - sum->delegated_ms);
    to_measure.push_back(&graphs[i]);
    measured_index.push_back(i);
  }
  if (to_measure.empty()) return response;
  ++misses_;
  absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> timings;
  {
    std::lock_guard<std::mutex> measuring(*measure_mu_[(*backend)->kind()]);
    ++measurements_;
    timings = (*backend)->MeasureGraphs(to_measure, timing, cancelled);
  }
  if (!timings.ok()) return timings.status();
  for (size_t j = 0; j < measured_index.size(); ++j) {
    const int i = measured_index[j];
    GraphMeasureResult* result = response.mutable_results(i);
    const absl::StatusOr<GraphTiming>& t = (*timings)[j];
    if (!t.ok()) {
      ++errors_;
      result->mutable_error()->set_code(static_cast<int>(t.status().code()));
      result->mutable_error()->set_message(std::string(t.status().message()));
      continue;
    }
    GraphMeasurement m = partial[i];
    SetTiming(*t, (*backend)->kind(), (*backend)->device(), m);
    m.set_opaque_skipped(t->opaque_skipped);
    m.set_reorders(t->reorders);
    m.set_load_time_nodes(t->load_time_nodes);
    m.set_views_materialized(t->views_materialized);
    m.set_views(request.views());
    m.set_graph_key(keys[i]);
    storage::SetTime(absl::Now(), m.mutable_measured_at());
    absl::Status stored = cache_->PutGraph(m.backend(), m.device(), keys[i], m);
    if (!stored.ok()) WarnCacheNotStored(stored);
    *result->mutable_measurement() = std::move(m);
  }
  return response;
}

absl::StatusOr<MeasureGraphResponse> CostProfiler::MeasureOnnxModels(const MeasureGraphRequest& request,
                                                                    MeasureBackend& backend,
                                                                    const GraphTimingOptions& timing,
                                                                    const std::function<bool()>& cancelled) {
  std::vector<OnnxModelSource> models;
  for (const std::string& bytes : request.onnx_models()) models.push_back({bytes, ""});
  for (const std::string& path : request.onnx_model_paths()) models.push_back({"", path});
  absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> timings;
  absl::StatusOr<std::vector<ModelComparison>> comparisons = std::vector<ModelComparison>{};
  {
    std::lock_guard<std::mutex> measuring(*measure_mu_[backend.kind()]);
    ++measurements_;
    // Compared first: one run each, and a backend that cannot compare still times.
    if (request.compare_outputs() && models.size() > 1) {
      comparisons = backend.CompareModels(models, request.compare_seed() == 0 ? 1 : request.compare_seed());
    }
    timings = backend.MeasureModels(models, timing, cancelled);
  }
  if (!timings.ok()) return timings.status();
  MeasureGraphResponse response;
  if (!comparisons.ok()) {
    // Said in every entry: the caller must see that nothing was compared.
    for (size_t i = 1; i < models.size(); ++i) {
      ModelComparison* c = response.add_comparisons();
      c->set_failure(ModelComparison::NOT_COMPARED);
      c->set_error(std::string(comparisons.status().message()));
    }
  } else {
    for (ModelComparison& c : *comparisons) *response.add_comparisons() = std::move(c);
  }
  response.set_interleaved(models.size() > 1);
  for (const absl::StatusOr<GraphTiming>& t : *timings) {
    GraphMeasureResult* result = response.add_results();
    if (!t.ok()) {
      ++errors_;
      result->mutable_error()->set_code(static_cast<int>(t.status().code()));
      result->mutable_error()->set_message(std::string(t.status().message()));
      continue;
    }
    GraphMeasurement* m = result->mutable_measurement();
    SetTiming(*t, backend.kind(), backend.device(), *m);
    storage::SetTime(absl::Now(), m->mutable_measured_at());
  }
  return response;
}

}  // namespace taso::profiler
