#include "profiler/cpu/graph_runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/random_inputs.h"
#include "profiler/cpu/cpu_kernels.h"
#include "costs/signature.h"

namespace taso::profiler {
namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;

memory::dims LogicalDims(const TensorType& t) {
  memory::dims dims(t.dims.begin(), t.dims.end());
  if (dims.empty()) dims.push_back(1);
  return dims;
}

memory::dims RowMajorStrides(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

memory::desc RowMajorMd(const memory::dims& dims) { return memory::desc(dims, dt::f32, RowMajorStrides(dims)); }

bool IsPlain(const memory::desc& md) {
  return md.data.format_kind == dnnl_blocked && md.data.format_desc.blocking.inner_nblks == 0;
}

// A tensor as the runner holds it: a value fixed at load (weights and what
// is computed from them only) or a buffer a kernel fills at run time.
struct Value {
  std::optional<FloatTensor> constant;
  memory buffer;     // runtime values; empty for constants
  // The type (layout) readers' kernels are built for: the graph's, except
  // downstream of a materialized view, whose copy is dense and row-major.
  TensorType type;
  std::string none;  // why there is no value (a non-float opaque output)
};

// Whether ONNX Runtime (level all) folds a Transpose into the MatMuls that
// read it (MatmulTransposeFusion: com.microsoft FusedMatMul with transA/B,
// transBatchA/B), so no copy runs: the permutation swaps the last two
// dimensions, or (rank 3 or more) moves the first dimension next to last,
// with or without that swap. A graph output is never folded.
bool FoldedIntoMatMulByOrt(const std::vector<int>& perm, const std::vector<OpKind>& readers, bool graph_output) {
  if (graph_output || readers.empty()) return false;
  for (OpKind k : readers) {
    if (k != OpKind::kMatMul) return false;
  }
  const int rank = static_cast<int>(perm.size());
  if (rank < 2) return false;
  std::vector<int> swap_last(rank), batch(rank);
  for (int i = 0; i < rank; ++i) swap_last[i] = i;
  std::swap(swap_last[rank - 2], swap_last[rank - 1]);
  if (perm == swap_last) return true;
  if (rank < 3) return false;
  // [1, ..., rank-2, 0, rank-1] (transBatch), or its last two swapped.
  for (int i = 0; i < rank - 2; ++i) batch[i] = i + 1;
  batch[rank - 2] = 0;
  batch[rank - 1] = rank - 1;
  if (perm == batch) return true;
  std::swap(batch[rank - 2], batch[rank - 1]);
  return perm == batch;
}

class LoadedGraph {
 public:
  static absl::StatusOr<std::unique_ptr<LoadedGraph>> Load(const Graph& graph, ViewPolicy views,
                                                           const dnnl::engine& engine, dnnl::stream& stream,
                                                           uint64_t seed);
  // The timed work: every step in order, then a wait.
  void Run(dnnl::stream& stream) {
    for (const auto& step : steps_) step(stream);
    stream.wait();
  }
  absl::StatusOr<std::vector<FloatTensor>> ReadOutputs(dnnl::stream& stream);
  const GraphTiming& counts() const { return counts_; }

 private:
  LoadedGraph(const Graph& graph, ViewPolicy views, const dnnl::engine& engine)
      : graph_(graph), views_(views), engine_(engine) {}
  absl::Status LoadNode(const Node& node, const std::map<std::string, FloatTensor>& feeds, dnnl::stream& stream,
                        uint64_t seed);
  absl::Status LoadOperator(const Node& node, dnnl::stream& stream);
  // A buffer in row-major order holding `value`.
  memory HostBuffer(const FloatTensor& value);
  // Split parts as views into the input's buffer, when it is plain.
  bool SplitAsView(const Node& node, const CanonicalSignature& sig, const memory& input);
  // Whether `node`, a view of a run-time value, runs as a copy (its own
  // dense buffer) under views_. What ONNX Runtime does, per operator:
  //   Split: a kernel copying each output: copied.
  //   Transpose: a kernel writing the permuted tensor: copied, unless ORT
  //     folds it into the MatMuls reading it (FoldedIntoMatMulByOrt).
  //   Reshape (and Flatten, Squeeze, Unsqueeze, which export as Reshape):
  //     reuses its input's buffer: stays an alias.
  // Concat is no view here under either policy: it always runs a concat
  // kernel copying every input (producers never write into its slices), as
  // ORT's Concat copies.
  bool Materializes(const Node& node) const;

  const Graph& graph_;
  const ViewPolicy views_;
  dnnl::engine engine_;
  std::vector<std::vector<std::vector<OpKind>>> readers_;  // [node][output]: kinds of the nodes reading it
  std::vector<std::vector<bool>> graph_output_;             // [node][output]
  std::vector<std::vector<Value>> values_;  // [node][output]
  std::vector<std::unique_ptr<cpu::Kernel>> kernels_;
  std::vector<std::function<void(dnnl::stream&)>> steps_;
  GraphTiming counts_;
};

memory LoadedGraph::HostBuffer(const FloatTensor& value) {
  memory m(RowMajorMd(LogicalDims(value.type)), engine_);
  std::memcpy(m.get_data_handle(), value.data.data(), value.data.size() * sizeof(float));
  return m;
}

absl::StatusOr<std::unique_ptr<LoadedGraph>> LoadedGraph::Load(const Graph& graph, ViewPolicy views,
                                                               const dnnl::engine& engine, dnnl::stream& stream,
                                                               uint64_t seed) {
  if (absl::Status valid = graph.Validate(); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid graph: ", valid.message()));
  }
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return absl::InvalidArgumentError(absl::StrCat("invalid graph: ", order.status().message()));
  std::unique_ptr<LoadedGraph> loaded(new LoadedGraph(graph, views, engine));
  loaded->values_.resize(graph.num_nodes());
  loaded->readers_.resize(graph.num_nodes());
  loaded->graph_output_.resize(graph.num_nodes());
  for (const Node& n : graph.nodes()) {
    loaded->readers_[n.id].resize(n.output_types.size());
    loaded->graph_output_[n.id].resize(n.output_types.size(), false);
  }
  for (const Node& n : graph.nodes()) {
    for (const TensorRef& in : n.inputs) loaded->readers_[in.node][in.index].push_back(n.kind);
  }
  for (const GraphOutput& o : graph.outputs()) loaded->graph_output_[o.tensor.node][o.tensor.index] = true;
  const std::map<std::string, FloatTensor> feeds = DeterministicFloatFeeds(graph, seed);
  for (int id : *order) {
    absl::Status s = cpu::CatchDnnl([&] { return loaded->LoadNode(graph.node(id), feeds, stream, seed); });
    if (!s.ok()) return s;
  }
  return loaded;
}

absl::Status LoadedGraph::LoadNode(const Node& node, const std::map<std::string, FloatTensor>& feeds,
                                   dnnl::stream& stream, uint64_t seed) {
  std::vector<Value>& out = values_[node.id];
  out.resize(node.output_types.size());
  for (size_t i = 0; i < out.size(); ++i) out[i].type = node.output_types[i];
  if (IsInputOrWeight(node.kind)) {
    auto feed = feeds.find(node.name);
    if (feed == feeds.end() || node.output_types[0].dtype != DType::kFloat32) {
      // Integer ids or shapes usually feed opaque operators only; an IR
      // operator that reads one fails, naming it.
      out[0].none = absl::StrCat(DescribeNode(node), ", ", node.output_types[0].ToString(),
                                 ", and the cpu graph runner computes float32 only");
      return absl::OkStatus();
    }
    if (node.kind == OpKind::kWeight) {
      out[0].constant = feed->second;
      const size_t bytes = out[0].constant->data.size() * sizeof(float);
      if (node.data != nullptr && node.data->size() == bytes) {
        std::memcpy(out[0].constant->data.data(), node.data->data(), bytes);  // the model's own values
      }
    } else {
      out[0].buffer = HostBuffer(feed->second);
    }
    return absl::OkStatus();
  }
  if (node.kind == OpKind::kOpaque) {
    ++counts_.opaque_skipped;
    for (size_t i = 0; i < out.size(); ++i) {
      const TensorType& t = node.output_types[i];
      if (t.dtype == DType::kFloat32) {
        out[i].buffer = HostBuffer(OpaqueOutputValues(t, node.id, static_cast<int>(i), seed));
      } else {
        out[i].none = absl::StrCat("output ", i, " of opaque ", DescribeNode(node), ", ", t.ToString(),
                                   ", and the cpu graph runner computes float32 only");
      }
    }
    return absl::OkStatus();
  }
  bool all_constant = true;
  for (const TensorRef& in : node.inputs) {
    const Value& v = values_[in.node][in.index];
    if (!v.none.empty()) return absl::UnimplementedError(absl::StrCat(DescribeNode(node), " reads the ", v.none));
    all_constant = all_constant && v.constant.has_value();
  }
  if (all_constant) {
    // From weights only: computed once at load, as runtimes fold constants.
    std::vector<const FloatTensor*> args;
    for (const TensorRef& in : node.inputs) args.push_back(&*values_[in.node][in.index].constant);
    auto results = EvalOpFloat(node.kind, node.params, args);
    if (!results.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": ", results.status().message()));
    }
    for (size_t i = 0; i < out.size() && i < results->size(); ++i) out[i].constant = std::move((*results)[i]);
    if (!IsLoadTimeConstant(node.kind)) ++counts_.load_time_nodes;
    return absl::OkStatus();
  }
  return LoadOperator(node, stream);
}

bool LoadedGraph::SplitAsView(const Node& node, const CanonicalSignature& sig, const memory& input) {
  const memory::dims in_dims = LogicalDims(sig.op.inputs[0]);
  auto whole = cpu::ViewWithDims(input, in_dims);
  if (!whole || !IsPlain(whole->get_desc())) return false;
  memory::dims offsets(in_dims.size(), 0);
  const int axis = sig.op.params.axis;
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const memory::dims part = LogicalDims(sig.outputs[i]);
    values_[node.id][i].buffer =
        memory(whole->get_desc().submemory_desc(part, offsets), engine_, whole->get_data_handle());
    offsets[axis] += part[axis];
  }
  return true;
}

bool LoadedGraph::Materializes(const Node& node) const {
  if (views_ != ViewPolicy::kMaterialize) return false;
  switch (node.kind) {
    case OpKind::kSplit:
      return true;
    case OpKind::kTranspose:
      // A shuffling transpose is a copy kernel under either policy.
      return !node.params.shuffle &&
             !FoldedIntoMatMulByOrt(node.params.perm, readers_[node.id][0], graph_output_[node.id][0]);
    default:
      return false;
  }
}

absl::Status LoadedGraph::LoadOperator(const Node& node, dnnl::stream& stream) {
  const bool materialize = Materializes(node);
  Signature sig{node.kind, node.params, {}};
  // A materialized transpose is one that shuffles: a permuting copy into a
  // dense row-major buffer.
  if (materialize && node.kind == OpKind::kTranspose) sig.params.shuffle = true;
  std::vector<memory> sources;
  for (const TensorRef& in : node.inputs) {
    sig.inputs.push_back(values_[in.node][in.index].type);
    sources.push_back(values_[in.node][in.index].buffer);
  }
  auto canonical = Canonicalize(sig);
  if (!canonical.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(DescribeNode(node), ": ", canonical.status().message()));
  }
  if (canonical->outputs.size() != node.output_types.size()) {
    return absl::InternalError(absl::StrCat(DescribeNode(node), ": ", canonical->outputs.size(),
                                            " outputs inferred, the graph has ", node.output_types.size()));
  }
  // The layout the kernel writes (a materialized view's is row-major); the
  // graph's split records stay, so a split that undoes a concat still can.
  for (size_t i = 0; i < canonical->outputs.size(); ++i) {
    values_[node.id][i].type.strides = canonical->outputs[i].strides;
  }
  if (node.kind == OpKind::kSplit && !materialize && SplitAsView(node, *canonical, sources[0])) {
    return absl::OkStatus();
  }
  auto kernel = cpu::Kernel::Build(*canonical, engine_, sources);
  if (!kernel.ok()) {
    return absl::Status(kernel.status().code(),
                        absl::StrCat(DescribeNode(node), ": ", kernel.status().message()));
  }
  cpu::Kernel& k = **kernel;
  for (int i = 0; i < k.num_inputs(); ++i) {
    const Value& v = values_[node.inputs[i].node][node.inputs[i].index];
    if (v.constant) {
      // A weight, reordered once into the kernel's layout.
      absl::Status s = k.LoadInput(i, *v.constant, stream);
      if (!s.ok()) return s;
      continue;
    }
    if (k.input_bound(i)) continue;
    // An activation in another layout than this kernel's: a timed reorder.
    const memory& to = k.input_memory(i);
    auto from = cpu::ViewWithDims(v.buffer, to.get_desc().dims());
    if (!from) {
      return absl::UnimplementedError(absl::StrCat(DescribeNode(node), ": input ", i,
                                                   " is held in a layout that cannot be viewed with the kernel's ",
                                                   to.get_desc().dims().size(), " dimensions"));
    }
    dnnl::reorder reorder(*from, to);
    steps_.push_back([reorder, from = *from, to](dnnl::stream& s) {
      reorder.execute(s, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    });
    ++counts_.reorders;
  }
  if (!k.is_view()) {
    steps_.push_back([&k](dnnl::stream& s) { k.Run(s); });
    ++counts_.kernels;
    if (materialize) ++counts_.views_materialized;
  }
  for (int i = 0; i < k.num_outputs(); ++i) values_[node.id][i].buffer = k.output_memory(i);
  kernels_.push_back(std::move(*kernel));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<FloatTensor>> LoadedGraph::ReadOutputs(dnnl::stream& stream) {
  std::vector<FloatTensor> result;
  for (const GraphOutput& o : graph_.outputs()) {
    const Value& v = values_[o.tensor.node][o.tensor.index];
    if (v.constant) {
      result.push_back(*v.constant);
      continue;
    }
    if (!v.none.empty()) return absl::UnimplementedError(absl::StrCat("graph output ", o.name, ": ", v.none));
    FloatTensor t;
    t.type = graph_.type(o.tensor);
    t.data.resize(t.type.num_elements());
    absl::Status s = cpu::CatchDnnl([&] {
      const memory::dims dims = v.buffer.get_desc().dims();
      memory plain(RowMajorMd(dims), engine_, t.data.data());
      dnnl::reorder(v.buffer, plain).execute(stream, {{DNNL_ARG_FROM, v.buffer}, {DNNL_ARG_TO, plain}});
      stream.wait();
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    result.push_back(std::move(t));
  }
  return result;
}

double ElapsedMs(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

FloatTensor OpaqueOutputValues(const TensorType& type, int node, int index, uint64_t seed) {
  return DeterministicFloatTensor(type, absl::StrCat("opaque output ", node, ":", index), seed);
}

absl::StatusOr<std::vector<FloatTensor>> ExecuteGraphOnCpu(CpuBackend& backend, const Graph& graph, uint64_t seed,
                                                           ViewPolicy views) {
  absl::StatusOr<std::vector<FloatTensor>> outputs = absl::UnknownError("not run");
  absl::Status s = backend.RunOnMeasurementThread([&](const dnnl::engine& engine, dnnl::stream& stream) {
    auto loaded = LoadedGraph::Load(graph, views, engine, stream, seed);
    if (!loaded.ok()) return loaded.status();
    absl::Status ran = cpu::CatchDnnl([&] {
      (*loaded)->Run(stream);
      return absl::OkStatus();
    });
    if (!ran.ok()) return ran;
    outputs = (*loaded)->ReadOutputs(stream);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return outputs;
}

absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureGraphsOnCpu(
    CpuBackend& backend, const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
    const std::function<bool()>& cancelled) {
  const int n = static_cast<int>(graphs.size());
  std::vector<absl::StatusOr<GraphTiming>> results(n, GraphTiming{});
  const int passes = GraphTimingPasses(n);
  std::vector<std::vector<std::vector<double>>> samples(n, std::vector<std::vector<double>>(passes));
  const int runs = std::max(1, (options.runs + passes - 1) / passes);
  const int max_runs = std::max(runs, options.max_runs / passes);
  const double min_ms = options.min_timed_ms / passes;
  absl::Status s = backend.RunOnMeasurementThread([&](const dnnl::engine& engine, dnnl::stream& stream) {
    return cpu::CatchDnnl([&]() -> absl::Status {
      for (int pass = 0; pass < passes; ++pass) {
        const std::vector<int> order = GraphTimingOrder(n, pass);
        std::vector<std::unique_ptr<LoadedGraph>> loaded(n);
        for (int i : order) {
          if (!results[i].ok()) continue;
          auto l = LoadedGraph::Load(*graphs[i], options.views, engine, stream, /*seed=*/1);
          if (!l.ok()) {
            results[i] = l.status();
            continue;
          }
          loaded[i] = std::move(*l);
          GraphTiming& t = *results[i];
          const GraphTiming& c = loaded[i]->counts();
          t.opaque_skipped = c.opaque_skipped;
          t.kernels = c.kernels;
          t.reorders = c.reorders;
          t.load_time_nodes = c.load_time_nodes;
          t.views_materialized = c.views_materialized;
        }
        for (int w = 0; w < options.warmup; ++w) {
          for (int i : order) {
            if (loaded[i]) loaded[i]->Run(stream);
          }
        }
        std::vector<double> elapsed(n, 0);
        for (int round = 0;; ++round) {
          bool enough = round >= max_runs;
          if (round >= runs) {
            enough = true;
            for (int i : order) enough = enough && (!loaded[i] || elapsed[i] >= min_ms);
            enough = enough || round >= max_runs;
          }
          if (enough) break;
          if (cancelled && cancelled()) {
            return absl::CancelledError(absl::StrCat("whole-graph measurement cancelled (deadline passed or ",
                                                     "client gone) in pass ", pass + 1, ", round ", round + 1));
          }
          for (int i : order) {
            if (!loaded[i]) continue;
            const auto start = std::chrono::steady_clock::now();
            loaded[i]->Run(stream);
            const double ms = ElapsedMs(start);
            samples[i][pass].push_back(ms);
            elapsed[i] += ms;
          }
        }
      }
      return absl::OkStatus();
    });
  });
  if (!s.ok()) return s;
  SummarizeGraphTimings(samples, results);
  return results;
}

}  // namespace taso::profiler
