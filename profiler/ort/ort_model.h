// The ONNX models the ort backend times: one operator of a signature, laid
// out as a real model holds it, or an IR graph as it is.
#ifndef TASO_PROFILER_ORT_ORT_MODEL_H_
#define TASO_PROFILER_ORT_ORT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "costs/signature.h"

namespace taso::profiler {

// The graph a signature is timed as, and how many operator nodes it holds.
// Operands a model holds as weights are weights with deterministic values,
// so ONNX Runtime pre-packs them as it does in a real model: conv2d's weight
// and bias, a matmul's 2-D right-hand side, batch norm's four parameters.
// Every other operand is a graph input. `copies` operators (each with
// weights of its own) make the weights of a lone operator as cold as a
// model's: timed in a loop, one 1 MB weight stays in L2, while a model's
// layers together stream theirs from L3 or memory (OrtCopies). An input
// whose layout is a permutation of row-major is a transpose (no shuffle) of
// a row-major input, which ORT folds into a matmul (FusedMatMul) or runs as
// a Transpose kernel, as in a real model; fused activations are the separate
// nodes ORT fuses back (Conv + Relu -> FusedConv).
//
// `nodes` (0: as many as `copies`) is how many operators the model holds;
// operator k uses weight set k % copies, so more nodes than copies repeat
// the work without warming more weights than the copies do (OrtNodes).
// Where the operator's output has the type of some of its operands
// (ChainedOperands), the nodes form a chain: node k reads the outputs of
// nodes k-1, k-2, ... as those operands, so the model has the inputs and
// the one output of a single operator, and ORT, which binds every graph
// input and output on every run (a few microseconds each), runs only the
// operators. Otherwise each node's outputs end the graph, and each group of
// `copies` nodes reads an input of its own (the first operand not held as a
// weight), so no two nodes compute the same value: ORT merges such nodes
// (common subexpressions) wherever one does not end the graph, as the
// matmul before a fused activation does not. An operator with no such
// operand gets only the copies.
struct SignatureModel {
  Graph graph;
  int operators = 0;
};
absl::StatusOr<SignatureModel> SignatureGraph(const CanonicalSignature& signature, int copies = 1, int nodes = 0);

// The operands SignatureGraph chains, in order: those not held as weights
// whose type (row-major) is the operator's one output type. None for a
// transpose (ORT folds a chain of them into one) and for a product by a
// factor that stays the same (scalar multiplication, or an elementwise one
// with an operand of another shape): x * y * y * ... decays through
// denormals, which CPUs run slowly.
std::vector<int> ChainedOperands(const CanonicalSignature& signature);

// How many copies SignatureGraph (OpaqueTimingModel for an opaque operator)
// needs for the weights to total `weight_bytes`: 1 for an operator without
// weights, at most `max_copies`. An opaque operator's weights are its
// constant operands too large to carry a value (signature.h).
int OrtCopies(const CanonicalSignature& signature, int64_t weight_bytes, int max_copies);

// How many operator nodes a timing model of `copies` copies holds: a
// multiple of `copies` that gives about `spread_ms` of work a run, at most
// `max_nodes` (and never fewer than `copies`), and unchained, at most
// `max_outputs` graph outputs in all. Above one thread a lone small
// operator is dominated by waking the thread pool, which a model's run pays
// once, not per node: spread over many nodes, each costs what it adds
// inside a graph. The work is a rough roofline estimate from
// SignatureFlops and SignatureBytes; it only sizes the model, never a cost.
int OrtNodes(const CanonicalSignature& signature, int copies, double spread_ms, int max_nodes, int max_outputs);

// The model a run's fixed cost is measured with: `inputs` graph inputs and
// `outputs` graph outputs of one float each, every output a relu. The ort
// backend subtracts its time from that of an operator model with as many
// inputs and outputs, so that an operator costs what it adds to a graph run,
// not what a session.run from node costs (binding each input and output
// included: a split's eight outputs are no work inside a graph).
Graph RunOverheadGraph(int inputs, int outputs);

// `graph` as a standalone ONNX model, every weight without values given
// deterministic ones (timings do not depend on values, and the optimizer
// sends graphs without them; batch-norm variances are made positive).
absl::StatusOr<std::string> TimingModel(const Graph& graph);

// Deterministic values for a weight of `type` (normal floats from `name`,
// made positive if asked; integers and booleans 0), little-endian.
std::shared_ptr<const std::string> DeterministicValues(const TensorType& type, const std::string& name,
                                                       bool positive);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_ORT_MODEL_H_
