#include "core/decomposition.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"

namespace taso {
namespace {

OpKind ActivationOp(Activation a) {
  switch (a) {
    case Activation::kRelu: return OpKind::kRelu;
    case Activation::kTanh: return OpKind::kTanh;
    case Activation::kSigmoid: return OpKind::kSigmoid;
    case Activation::kNone: break;
  }
  return OpKind::kInput;  // not reached for kNone: callers check first
}

// act(a·b + c): ONNX Runtime's FusedGemm with alpha = beta = 1 and no
// transposes. Gemm's operands are matrices, and c broadcasts to the product's
// shape without widening it (ONNX's unidirectional broadcast).
absl::StatusOr<Graph> FusedGemm(const OpParams& p, const std::vector<TensorType>& in) {
  const OpKind kind = OpKind::kFusedGemm;
  if (in.size() != 3) return InvalidOperands(kind, "takes a, b and c", in);
  if (in[0].rank() != 2 || in[1].rank() != 2) return InvalidOperands(kind, "a and b must be matrices", in);
  Graph g;
  std::vector<TensorRef> operand;
  for (size_t i = 0; i < in.size(); ++i) operand.push_back(g.AddInput(DecompositionInputName(i), in[i]));
  auto product = g.AddOp1(OpKind::kMatMul, OpParams{}, {operand[0], operand[1]});
  if (!product.ok()) return InvalidOperands(kind, std::string(product.status().message()), in);
  auto sum = g.AddOp1(OpKind::kEwAdd, OpParams{}, {*product, operand[2]});
  // The sum broadcasts both ways; Gemm's bias may not widen the product.
  if (!sum.ok() || g.type(*sum).dims != g.type(*product).dims) {
    return InvalidOperands(
        kind, absl::StrCat("c does not broadcast to the product's shape ", DimsToString(g.type(*product).dims)), in);
  }
  TensorRef out = *sum;
  if (p.activation != Activation::kNone) {
    auto activated = g.AddOp1(ActivationOp(p.activation), OpParams{}, {out});
    if (!activated.ok()) return activated.status();
    out = *activated;
  }
  g.AddOutput("out", out);
  return g;
}

}  // namespace

bool IsComposite(OpKind kind) { return kind == OpKind::kFusedGemm; }

std::string DecompositionInputName(int i) { return absl::StrCat("in", i); }

absl::StatusOr<Graph> DecompositionOf(OpKind kind, const OpParams& params, const std::vector<TensorType>& inputs) {
  switch (kind) {
    case OpKind::kFusedGemm:
      return FusedGemm(params, inputs);
    default:
      return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), " is not a composite operator"));
  }
}

}  // namespace taso
