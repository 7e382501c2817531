#include "core/proof_signature.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/decomposition.h"

namespace taso {

int64_t PermutationCode(const std::vector<int>& perm) {
  const int64_t rank = static_cast<int64_t>(perm.size());
  int64_t digits = 0;
  for (int p : perm) digits = digits * rank + p;
  return rank * 10000 + digits;
}

std::string ProofSignature::ToString() const {
  std::vector<std::string> parts;
  for (int64_t p : params) parts.push_back(IsFactVariable(p) ? absl::StrCat("?", -1 - p) : absl::StrCat(p));
  return absl::StrCat(name, "(", absl::StrJoin(parts, ","), ")");
}

bool ProofSignature::Admits(const ProofSignature& actual, FactBinding* binding) const {
  if (name != actual.name || params.size() != actual.params.size()) return false;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!IsFactVariable(params[i])) {
      if (params[i] != actual.params[i]) return false;
    } else if (binding != nullptr) {
      auto [it, fresh] = binding->emplace(params[i], actual.params[i]);
      if (!fresh && it->second != actual.params[i]) return false;
    }
  }
  return true;
}

bool SignaturesAdmit(const std::vector<ProofSignature>& recorded, const std::vector<ProofSignature>& actual,
                     FactBinding* binding) {
  if (recorded.size() != actual.size()) return false;
  for (size_t i = 0; i < recorded.size(); ++i) {
    if (!recorded[i].Admits(actual[i], binding)) return false;
  }
  return true;
}

bool OpensFact(OpenFacts which, const ProofSignature& sig) {
  const int k = OpenFactIndex(sig.name, which);
  if (k < 0 || IsFactVariable(sig.params[k])) return false;
  if (which == OpenFacts::kConcatUnequalHalves) return sig.params[k] == 0;
  if (which == OpenFacts::kConcatEqualHalves) return sig.params[k] == 1;
  return true;
}

void OpenFact(OpenFacts which, FactVariables& vars, ProofSignature& sig) {
  if (!OpensFact(which, sig)) return;
  const int k = OpenFactIndex(sig.name, which);
  const int var = vars.emplace(std::make_pair(sig.name, sig.params[k]), static_cast<int>(vars.size())).first->second;
  sig.params[k] = FactVariable(var);
}

int OpenFactIndex(const std::string& name, OpenFacts facts) {
  const bool halves = facts == OpenFacts::kConcatHalves || facts == OpenFacts::kAll ||
                      facts == OpenFacts::kConcatUnequalHalves || facts == OpenFacts::kConcatEqualHalves;
  const bool groups = facts == OpenFacts::kConvGroups || facts == OpenFacts::kAll;
  if (halves && name == "concat") return 1;
  if (groups && name == "conv2d") return 4;
  return -1;
}

absl::StatusOr<ProofSignature> ProofSignatureOf(OpKind kind, const OpParams& p, const std::vector<TensorType>& in,
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
      return ProofSignature{absl::StrCat(kind == OpKind::kEwAdd ? "ewadd" : "ewmul", broadcast ? "_bcast" : ""), {}};
    }
    // A scalar times a scalar is an element-wise product of equal shapes.
    case OpKind::kScalarMul:
      return ProofSignature{!in.empty() && in[0].dims.empty() ? "ewmul" : "smul", {}};
    case OpKind::kRelu: return ProofSignature{"relu", {}};
    case OpKind::kTanh: return ProofSignature{"tanh", {}};
    case OpKind::kSigmoid: return ProofSignature{"sigmoid", {}};
    // Layout (strides_only) changes no value; equal values with different
    // layouts never share a fingerprint, and the re-check compares types.
    case OpKind::kTranspose: return ProofSignature{"transpose", {PermutationCode(p.perm)}};
    case OpKind::kMatMul: {
      auto a = act(p.activation);
      if (!a.ok()) return a.status();
      // The output rank: batch dimensions broadcast.
      const size_t rank = in.size() < 2 ? 2 : std::max(in[0].dims.size(), in[1].dims.size());
      return ProofSignature{rank == 2 ? std::string("matmul") : absl::StrCat("matmul_r", rank), {*a}};
    }
    case OpKind::kConv2D: {
      auto a = act(p.activation);
      if (!a.ok()) return a.status();
      // groups = C_in / weight.dim[1], as shape inference has checked.
      int64_t groups = 1;
      if (in.size() == 2 && in[0].dims.size() == 4 && in[1].dims.size() == 4 && in[1].dims[1] > 0) {
        groups = in[0].dims[1] / in[1].dims[1];
      }
      return ProofSignature{"conv2d", {p.stride_h, p.stride_w, pad(p.padding), *a, groups}};
    }
    case OpKind::kPoolAvg:
      return ProofSignature{"pool_avg",
                       {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, pad(p.padding), p.count_include_pad ? 1 : 0}};
    case OpKind::kPoolMax:
      return ProofSignature{"pool_max", {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, pad(p.padding)}};
    case OpKind::kConcat: {
      if (in.size() != 2) return absl::InvalidArgumentError("a concat signature is for two operands");
      // Whether the halves have equal shapes: the grouped-convolution law
      // (two convolutions side by side are one with two groups) needs it.
      return ProofSignature{"concat", {p.axis, in[0].dims == in[1].dims ? 1 : 0}};
    }
    case OpKind::kSplit:
      if (!p.sizes.empty()) return absl::UnimplementedError("split with explicit sizes has no axioms");
      return ProofSignature{absl::StrCat("split_", output), {p.axis}};
    case OpKind::kEnlarge: return ProofSignature{"enlarge", {p.kernel_h, p.kernel_w}};
    case OpKind::kConstPool: return ProofSignature{"const_pool", dims(p.shape)};
    case OpKind::kConstIConv: return ProofSignature{"const_iconv", dims(p.shape)};
    case OpKind::kConstIMatMul: return ProofSignature{"const_imatmul", {p.shape.empty() ? 0 : p.shape[0]}};
    case OpKind::kConstOnes: return ProofSignature{absl::StrCat("const_ones_r", p.shape.size()), dims(p.shape)};
    case OpKind::kReshape: return ProofSignature{absl::StrCat("reshape_r", p.shape.size()), dims(p.shape)};
    case OpKind::kMergeGConv: return ProofSignature{"merge_gconv", {p.groups, p.count}};
    default:
      return absl::UnimplementedError(absl::StrCat("operator ", OpKindName(kind), " has no axioms"));
  }
}

absl::StatusOr<std::vector<ProofSignature>> NodeSignatures(OpKind kind, const OpParams& params,
                                                           const std::vector<TensorType>& inputs, int num_outputs) {
  std::vector<ProofSignature> out;
  if (IsComposite(kind)) {
    // Its decomposition's operators' signatures, in node (topological)
    // order, as the verifier's terms apply them.
    auto g = DecompositionOf(kind, params, inputs);
    if (!g.ok()) return g.status();
    for (const Node& node : g->nodes()) {
      if (node.kind == OpKind::kInput) continue;
      std::vector<TensorType> types;
      for (const TensorRef& r : node.inputs) types.push_back(g->type(r));
      auto sigs = NodeSignatures(node.kind, node.params, types, static_cast<int>(node.output_types.size()));
      if (!sigs.ok()) return sigs.status();
      out.insert(out.end(), sigs->begin(), sigs->end());
    }
    return out;
  }
  if (kind == OpKind::kConcat && inputs.size() > 2) {
    TensorType acc = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i) {
      auto sig = ProofSignatureOf(kind, params, {acc, inputs[i]}, 0);
      if (!sig.ok()) return sig.status();
      out.push_back(std::move(*sig));
      if (params.axis < 0 || params.axis >= static_cast<int>(acc.dims.size()) ||
          inputs[i].dims.size() != acc.dims.size()) {
        return absl::InvalidArgumentError("concat operands of different ranks");
      }
      std::vector<int64_t> dims = acc.dims;
      dims[params.axis] += inputs[i].dims[params.axis];
      acc = TensorType::RowMajor(acc.dtype, dims);
    }
    return out;
  }
  for (int o = 0; o < num_outputs; ++o) {
    auto sig = ProofSignatureOf(kind, params, inputs, o);
    if (!sig.ok()) return sig.status();
    out.push_back(std::move(*sig));
  }
  return out;
}

}  // namespace taso
