// How a backend turns isolated operator times into a graph's time. Summed
// kernel times miss what a runtime pays between kernels: dispatching each
// operator, and writing each output to memory for the next operator to read
// back (a kernel timed in a loop finds its data in cache). An operator that
// runs a kernel (measured time > 0: not a view, not a load-time constant)
// costs
//   kernel_ms + per_node_ms + per_mb_ms * output MB (10^6 bytes).
// Weights are a term of the whole graph, not of its operators: reading one
// weight many times (an unrolled RNN cell) is cheap while the graph's
// weights fit in the last-level cache, and every read streams from memory
// once they do not (a partial merge of NAS-RNN's gate matmuls kept the
// original weights and added merged copies, 16.8 -> 33.6 MB on a 32 MiB L3,
// and ran 0.69x in ONNX Runtime where kernel sums predicted 1.03x).
// WeightStreamMs prices that from the weight bytes the graph reads.
// The parameters come from the backend (the cpu backend's calibration) in
// every MeasureResponse, so the optimizer's searches and `taso profile graph`
// model a graph the same way.
#ifndef TASO_COSTS_GRAPH_COST_MODEL_H_
#define TASO_COSTS_GRAPH_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/op.h"
#include "core/tensor_type.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

// One operator's time in a graph, in milliseconds; `output_bytes` is what it writes.
double OperatorGraphMs(const GraphCostModel& model, double kernel_ms, int64_t output_bytes);
// The same for an operator of `kind`: a split or transpose that our backends
// run as a view (kernel_ms 0) costs a copy where the model says the target
// runtime materialises it (GraphCostModel.materialized_view_mb_ms).
double OperatorGraphMs(const GraphCostModel& model, OpKind kind, double kernel_ms, int64_t output_bytes);

// Bytes of the distinct weight tensors a graph's run-time operators read:
// weights, and values computed from weights only (a runtime folds those when
// it loads the model, so their results are what it reads). 4 bytes an
// element, as TensorBytes.
int64_t WeightWorkingSetBytes(const Graph& graph);

// Whether the model charges weights at all (a cache size, a rate and the
// spill points): without it a graph's weights need not be counted.
bool HasWeightTerm(const GraphCostModel& model);

// What a graph whose run-time operators read `weight_bytes` of weights pays
// for the part of them that does not stay in cache (GraphCostModel's weight_*
// fields); 0 when the model has no weight term.
double WeightStreamMs(const GraphCostModel& model, int64_t weight_bytes);

// Bytes of the given tensors; never overflows (capped at INT64_MAX / 4).
int64_t TensorBytes(const std::vector<TensorType>& types);

// "kernels + 0.0200 ms/node + 0.0300 ms/MB (calibration cpu_default@1a2b3c4d)",
// or "sum of kernel times" when every term is zero.
std::string DescribeGraphCostModel(const GraphCostModel& model);

}  // namespace taso::profiler

#endif  // TASO_COSTS_GRAPH_COST_MODEL_H_
