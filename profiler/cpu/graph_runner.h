// The whole-graph runner of the cpu backend: an IR graph run end to end on
// oneDNN over real buffers, in topological order, one cpu::Kernel per node.
//
// What a serious runtime does at load is done at load and not timed: weights
// and graph inputs are materialised (deterministic values), values computed
// from weights only (load-time constants, enlarge or concat of weights) are
// computed once, and weights are reordered into each kernel's preferred
// layout. What it does per inference is timed: every kernel, and every
// reorder of an activation between two nodes whose layouts differ (a
// convolution's blocked output read by a matmul). Tensors stay in buffers
// the runner owns between nodes; a kernel reads its producer's buffer
// directly where the layouts agree, and element-wise operators keep their
// inputs' layout. Views (transpose without shuffle, reshape, split) run no
// kernel and alias their input under ViewPolicy::kAlias; under kMaterialize
// the ones ONNX Runtime runs as copies (split; transpose unless ORT folds it
// into the matmuls reading it) run a timed copy into a dense buffer their
// readers read, and GraphTiming::views_materialized counts them. Views of
// values computed from weights only are folded at load under either policy.
// Fused epilogues run as the IR has them.
//
// Opaque operators (ONNX operators the IR does not know) cannot run here:
// they are skipped, their outputs are buffers of their declared type filled
// with OpaqueOutputValues, and GraphTiming::opaque_skipped counts them: the
// time measured excludes them.
#ifndef TASO_PROFILER_CPU_GRAPH_RUNNER_H_
#define TASO_PROFILER_CPU_GRAPH_RUNNER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/interpreter.h"
#include "profiler/cpu/cpu_backend.h"
#include "costs/timing.h"

namespace taso::profiler {

// The values an opaque operator's output `index` of node `node` holds in the
// runner (uniform in [-1, 1], from `seed`), so tests can reproduce them.
FloatTensor OpaqueOutputValues(const TensorType& type, int node, int index, uint64_t seed);

// Runs `graph` once on `backend` and returns its outputs (logical row-major),
// for checking the runner against the reference interpreter. Inputs and
// weights without data take DeterministicFloatFeeds(graph, seed).
// InvalidArgument for an invalid graph; Unimplemented (naming the node) for
// an operator or tensor oneDNN cannot run here.
absl::StatusOr<std::vector<FloatTensor>> ExecuteGraphOnCpu(CpuBackend& backend, const Graph& graph,
                                                           uint64_t seed = 1,
                                                           ViewPolicy views = ViewPolicy::kAlias);

// Times each graph as GraphTimingOptions says. With several graphs, they are
// timed round-robin (A B A B ...) in four passes: every other one creates and
// runs them in the reverse order, so the advantage of being created or run
// second cancels (timing.h GraphTimingPasses); each graph's median and min
// are over all passes' samples.
absl::StatusOr<std::vector<absl::StatusOr<GraphTiming>>> MeasureGraphsOnCpu(
    CpuBackend& backend, const std::vector<const Graph*>& graphs, const GraphTimingOptions& options,
    const std::function<bool()>& cancelled = nullptr);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_CPU_GRAPH_RUNNER_H_
