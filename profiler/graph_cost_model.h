// How a backend turns isolated operator times into a graph's time. Summed
// kernel times miss what a runtime pays between kernels: dispatching each
// operator, and writing each output to memory for the next operator to read
// back (a kernel timed in a loop finds its data in cache). An operator that
// runs a kernel (measured time > 0: not a view, not a load-time constant)
// costs
//   kernel_ms + per_node_ms + per_mb_ms * output MB (10^6 bytes).
// Weights read from memory are not a term: bench/calibrate.sh tried the
// bytes of inputs and outputs, and it overcharged models that reuse one
// weight many times (an unrolled RNN cell), which stays in cache.
// The parameters come from the backend (the cpu backend's calibration) in
// every MeasureResponse, so the optimizer's searches and `taso profile graph`
// model a graph the same way.
#ifndef TASO_PROFILER_GRAPH_COST_MODEL_H_
#define TASO_PROFILER_GRAPH_COST_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

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

// Bytes of the given tensors; never overflows (capped at INT64_MAX / 4).
int64_t TensorBytes(const std::vector<TensorType>& types);

// "kernels + 0.0200 ms/node + 0.0300 ms/MB (calibration cpu_default@1a2b3c4d)",
// or "sum of kernel times" when every term is zero.
std::string DescribeGraphCostModel(const GraphCostModel& model);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_GRAPH_COST_MODEL_H_
