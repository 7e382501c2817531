// Composite operators: a runtime's fused kernels, whose meaning is a small
// graph of the IR's other operators. Everything that gives an operator its
// meaning (shape inference, the interpreters, proof signatures and the
// verifier's terms) expands a composite through this one definition, so a
// rule into a fused kernel is proved and fuzzed like any other rule, and no
// kernel's semantics is written twice.
#ifndef TASO_CORE_DECOMPOSITION_H_
#define TASO_CORE_DECOMPOSITION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/op.h"
#include "core/tensor_type.h"

namespace taso {

// Whether `kind` is defined by a decomposition.
bool IsComposite(OpKind kind);

// The name of operand `i` among a decomposition's inputs ("in0", "in1", ...).
std::string DecompositionInputName(int i);

// The graph `kind` stands for when applied to operands of types `inputs`: its
// inputs are the operands, named by DecompositionInputName in operand order
// (node i is operand i); its outputs are the operator's outputs in order; its
// other nodes are all primitive and follow in topological order (each after
// its operands), so a walk over nodes() in order evaluates it. InvalidArgument,
// naming the operator, when the operands do not fit.
absl::StatusOr<Graph> DecompositionOf(OpKind kind, const OpParams& params, const std::vector<TensorType>& inputs);

}  // namespace taso

#endif  // TASO_CORE_DECOMPOSITION_H_
