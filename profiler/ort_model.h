// The ONNX models the ort backend times: one operator of a signature, laid
// out as a real model holds it, or an IR graph as it is.
#ifndef TASO_PROFILER_ORT_MODEL_H_
#define TASO_PROFILER_ORT_MODEL_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "profiler/signature.h"

namespace taso::profiler {

// The graph a signature is timed as. Operands a model holds as weights are
// weights with deterministic values, so ONNX Runtime pre-packs them as it
// does in a real model: conv2d's weight and bias, a matmul's 2-D right-hand
// side, batch norm's four parameters. Every other operand is a graph input.
// An input whose layout is a permutation of row-major is a transpose (no
// shuffle) of a row-major input, which ORT folds into a matmul (FusedMatMul)
// or runs as a Transpose kernel, as in a real model; fused activations are
// the separate nodes ORT fuses back (Conv + Relu -> FusedConv).
absl::StatusOr<Graph> SignatureGraph(const CanonicalSignature& signature);

// The model a run's fixed cost is measured with: relu of one float. The ort
// backend subtracts its time from an operator's, so that an operator costs
// what it adds to a graph run, not what a whole session.run costs from node.
Graph RunOverheadGraph();

// `graph` as a standalone ONNX model, every weight without values given
// deterministic ones (timings do not depend on values, and the optimizer
// sends graphs without them; batch-norm variances are made positive).
absl::StatusOr<std::string> TimingModel(const Graph& graph);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_MODEL_H_
