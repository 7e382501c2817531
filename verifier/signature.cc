#include "verifier/signature.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace taso::verifier {

int64_t PermutationCode(const std::vector<int>& perm) {
  const int64_t rank = static_cast<int64_t>(perm.size());
  int64_t digits = 0;
  for (int p : perm) digits = digits * rank + p;
  return rank * 10000 + digits;
}

absl::StatusOr<OpSignature> SignatureOf(OpKind kind, const OpParams& p, const std::vector<TensorType>& in,
                                        int output) {
  auto act = [](Activation a) -> absl::StatusOr<int64_t> {
    if (a == Activation::kNone) return kActNone;
    if (a == Activation::kRelu) return kActRelu;
    return absl::UnimplementedError(absl::StrCat("activation ", ActivationName(a), " has no axioms"));
  };
  auto pad = [](Padding x) -> int64_t { return x == Padding::kSame ? kPadSame : kPadValid; };
  if (p.padding == Padding::kExplicit &&
      (kind == OpKind::kConv2D || kind == OpKind::kPoolAvg || kind == OpKind::kPoolMax)) {
    // The axioms speak of SAME and VALID windows only.
    return absl::UnimplementedError(absl::StrCat(OpKindName(kind), " with explicit padding has no axioms"));
  }
  if (kind == OpKind::kConv2D && in.size() > 2) {
    // Generated rules never carry a bias; the optimizer fuses it structurally.
    return absl::UnimplementedError("conv2d with a bias input has no axioms");
  }
  auto dims = [](const std::vector<int64_t>& d) { return std::vector<int64_t>(d.begin(), d.end()); };
  switch (kind) {
    case OpKind::kEwAdd:
    case OpKind::kEwMul: {
      const bool broadcast = in.size() == 2 && in[0].dims != in[1].dims;
      return OpSignature{absl::StrCat(kind == OpKind::kEwAdd ? "ewadd" : "ewmul", broadcast ? "_bcast" : ""), {}};
    }
    // A scalar times a scalar is an element-wise product of equal shapes.
    case OpKind::kScalarMul:
      return OpSignature{!in.empty() && in[0].dims.empty() ? "ewmul" : "smul", {}};
    case OpKind::kRelu: return OpSignature{"relu", {}};
    case OpKind::kTanh: return OpSignature{"tanh", {}};
    case OpKind::kSigmoid: return OpSignature{"sigmoid", {}};
    // Layout (strides_only) changes no value; equal values with different
    // layouts never share a fingerprint, and the re-check compares types.
    case OpKind::kTranspose: return OpSignature{"transpose", {PermutationCode(p.perm)}};
    case OpKind::kMatMul: {
      auto a = act(p.activation);
      if (!a.ok()) return a.status();
      // The output rank: batch dimensions broadcast.
      const size_t rank = in.size() < 2 ? 2 : std::max(in[0].dims.size(), in[1].dims.size());
      return OpSignature{rank == 2 ? std::string("matmul") : absl::StrCat("matmul_r", rank), {*a}};
    }
    case OpKind::kConv2D: {
      auto a = act(p.activation);
      if (!a.ok()) return a.status();
      // groups = C_in / weight.dim[1], as shape inference has checked.
      int64_t groups = 1;
      if (in.size() == 2 && in[0].dims.size() == 4 && in[1].dims.size() == 4 && in[1].dims[1] > 0) {
        groups = in[0].dims[1] / in[1].dims[1];
      }
      return OpSignature{"conv2d", {p.stride_h, p.stride_w, pad(p.padding), *a, groups}};
    }
    case OpKind::kPoolAvg:
      return OpSignature{"pool_avg",
                       {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, pad(p.padding), p.count_include_pad ? 1 : 0}};
    case OpKind::kPoolMax:
      return OpSignature{"pool_max", {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, pad(p.padding)}};
    case OpKind::kConcat: return OpSignature{"concat", {p.axis}};
    case OpKind::kSplit:
      if (!p.sizes.empty()) return absl::UnimplementedError("split with explicit sizes has no axioms");
      return OpSignature{absl::StrCat("split_", output), {p.axis}};
    case OpKind::kEnlarge: return OpSignature{"enlarge", {p.kernel_h, p.kernel_w}};
    case OpKind::kConstPool: return OpSignature{"const_pool", dims(p.shape)};
    case OpKind::kConstIConv: return OpSignature{"const_iconv", dims(p.shape)};
    case OpKind::kConstIMatMul: return OpSignature{"const_imatmul", {p.shape.empty() ? 0 : p.shape[0]}};
    case OpKind::kConstOnes: return OpSignature{absl::StrCat("const_ones_r", p.shape.size()), dims(p.shape)};
    case OpKind::kReshape: return OpSignature{absl::StrCat("reshape_r", p.shape.size()), dims(p.shape)};
    case OpKind::kMergeGConv: return OpSignature{"merge_gconv", {p.groups, p.count}};
    default:
      return absl::UnimplementedError(absl::StrCat("operator ", OpKindName(kind), " has no axioms"));
  }
}

}  // namespace taso::verifier
