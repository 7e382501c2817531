#include "core/decomposition.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso {
namespace {

absl::Status Unfit(OpKind kind, const std::string& what, const std::vector<TensorType>& inputs) {
  std::vector<std::string> shapes;
  for (const TensorType& t : inputs) shapes.push_back(t.ToString());
  return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), ": ", what, " (inputs: ",
                                                 absl::StrJoin(shapes, ", "), ")"));
}

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
  if (in.size() != 3) return Unfit(kind, "takes a, b and c", in);
  if (in[0].rank() != 2 || in[1].rank() != 2) return Unfit(kind, "a and b must be matrices", in);
  if (in[2].rank() > 2) return Unfit(kind, "c must have rank <= 2", in);
  Graph g;
  std::vector<TensorRef> operand;
  for (size_t i = 0; i < in.size(); ++i) operand.push_back(g.AddInput(DecompositionInputName(i), in[i]));
  auto product = g.AddOp1(OpKind::kMatMul, OpParams{}, {operand[0], operand[1]});
  if (!product.ok()) return Unfit(kind, std::string(product.status().message()), in);
  const std::vector<int64_t> out_dims = g.type(*product).dims;
  for (int i = 0; i < in[2].rank(); ++i) {
    const int64_t d = in[2].dims[in[2].rank() - 1 - i];
    if (d != 1 && d != out_dims[1 - i]) {
      return Unfit(kind, absl::StrCat("c does not broadcast to the product's shape ", DimsToString(out_dims)), in);
    }
  }
  auto sum = g.AddOp1(OpKind::kEwAdd, OpParams{}, {*product, operand[2]});
  if (!sum.ok()) return Unfit(kind, std::string(sum.status().message()), in);
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
