#include "core/op.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso {

const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone: return "none";
    case Activation::kRelu: return "relu";
    case Activation::kSigmoid: return "sigmoid";
    case Activation::kTanh: return "tanh";
  }
  return "?";
}

const char* PaddingName(Padding p) {
  switch (p) {
    case Padding::kSame: return "same";
    case Padding::kValid: return "valid";
    case Padding::kExplicit: return "explicit";
  }
  return "?";
}

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kInput: return "input";
    case OpKind::kWeight: return "weight";
    case OpKind::kEwAdd: return "ewadd";
    case OpKind::kEwMul: return "ewmul";
    case OpKind::kScalarMul: return "smul";
    case OpKind::kTranspose: return "transpose";
    case OpKind::kMatMul: return "matmul";
    case OpKind::kConv2D: return "conv2d";
    case OpKind::kEnlarge: return "enlarge";
    case OpKind::kRelu: return "relu";
    case OpKind::kTanh: return "tanh";
    case OpKind::kSigmoid: return "sigmoid";
    case OpKind::kPoolAvg: return "poolavg";
    case OpKind::kPoolMax: return "poolmax";
    case OpKind::kConcat: return "concat";
    case OpKind::kSplit: return "split";
    case OpKind::kReshape: return "reshape";
    case OpKind::kMergeGConv: return "merge_gconv";
    case OpKind::kConstPool: return "const_pool";
    case OpKind::kConstIConv: return "const_iconv";
    case OpKind::kConstIMatMul: return "const_imatmul";
    case OpKind::kConstOnes: return "const_ones";
    case OpKind::kBatchNorm: return "batchnorm";
    case OpKind::kOpaque: return "opaque";
    case OpKind::kFusedGemm: return "fused_gemm";
  }
  return "?";
}

std::vector<OpKind> AllOpKinds() {
  std::vector<OpKind> kinds;
  for (int k = static_cast<int>(OpKind::kInput); k <= static_cast<int>(kLastOpKind); ++k) {
    kinds.push_back(static_cast<OpKind>(k));
  }
  return kinds;
}

std::optional<OpKind> OpKindFromName(const std::string& name) {
  for (OpKind k : AllOpKinds()) {
    if (name == OpKindName(k)) return k;
  }
  return std::nullopt;
}

namespace {

std::string KernelStr(const OpParams& p) { return absl::StrCat(p.kernel_h, "x", p.kernel_w); }
std::string StrideStr(const OpParams& p) { return absl::StrCat(p.stride_h, "x", p.stride_w); }
// "same", "valid" or "explicit:1,1,0,0" (top, left, bottom, right).
std::string PadStr(const OpParams& p) {
  if (p.padding != Padding::kExplicit) return PaddingName(p.padding);
  return absl::StrCat("explicit:", absl::StrJoin(p.pads, ","));
}

}  // namespace

std::string CanonicalParams(OpKind kind, const OpParams& p) {
  switch (kind) {
    case OpKind::kConv2D:
      return absl::StrCat("stride=", StrideStr(p), ",pad=", PadStr(p),
                          ",act=", ActivationName(p.activation));
    case OpKind::kPoolAvg:
      return absl::StrCat("kernel=", KernelStr(p), ",stride=", StrideStr(p),
                          ",pad=", PadStr(p),
                          ",count_pad=", p.count_include_pad ? 1 : 0);
    case OpKind::kPoolMax:
      return absl::StrCat("kernel=", KernelStr(p), ",stride=", StrideStr(p),
                          ",pad=", PadStr(p));
    case OpKind::kMatMul:
    case OpKind::kFusedGemm:
      return absl::StrCat("act=", ActivationName(p.activation));
    case OpKind::kTranspose:
      return absl::StrCat("perm=", absl::StrJoin(p.perm, ","), ",shuffle=", p.shuffle ? 1 : 0);
    case OpKind::kConcat:
      return absl::StrCat("axis=", p.axis);
    case OpKind::kSplit:
      return p.sizes.empty() ? absl::StrCat("axis=", p.axis)
                             : absl::StrCat("axis=", p.axis, ",sizes=", absl::StrJoin(p.sizes, ","));
    case OpKind::kReshape:
      return absl::StrCat("shape=", absl::StrJoin(p.shape, ","));
    case OpKind::kEnlarge:
      return absl::StrCat("kernel=", KernelStr(p));
    case OpKind::kMergeGConv:
      return absl::StrCat("groups=", p.groups, ",count=", p.count);
    case OpKind::kConstPool:
    case OpKind::kConstIConv:
    case OpKind::kConstIMatMul:
    case OpKind::kConstOnes:
      return absl::StrCat("shape=", absl::StrJoin(p.shape, ","));
    case OpKind::kBatchNorm:
      return absl::StrCat("eps=", p.epsilon);
    case OpKind::kOpaque: {
      std::string s = absl::StrCat("type=", p.opaque.domain, "::", p.opaque.op_type);
      for (const auto& [name, value] : p.opaque.attributes) {
        Hasher h;
        h.AddString(value);
        absl::StrAppend(&s, ",", name, "#", h.Finish().ToHex().substr(0, 16));
      }
      for (const TensorType& t : p.opaque.output_types) absl::StrAppend(&s, ",out=", t.ToString());
      // Left out when unset, so operators imported without them keep their text.
      if (p.opaque.opset != 0) absl::StrAppend(&s, ",opset=", p.opaque.opset);
      if (!p.opaque.input_slots.empty()) absl::StrAppend(&s, ",in_slots=", absl::StrJoin(p.opaque.input_slots, ":"));
      if (!p.opaque.output_slots.empty()) absl::StrAppend(&s, ",out_slots=", absl::StrJoin(p.opaque.output_slots, ":"));
      return s;
    }
    case OpKind::kInput:
    case OpKind::kWeight:
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
    case OpKind::kScalarMul:
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
      return "";
  }
  return "";
}

std::string OpLabel(OpKind kind, const OpParams& params) {
  const std::string canonical = CanonicalParams(kind, params);
  return canonical.empty() ? OpKindName(kind) : absl::StrCat(OpKindName(kind), "[", canonical, "]");
}

void HashParams(OpKind kind, const OpParams& params, Hasher& h) {
  h.AddString(CanonicalParams(kind, params));
}

bool ParamsEqual(OpKind kind, const OpParams& a, const OpParams& b) {
  if (kind == OpKind::kOpaque) {
    // Attribute bytes are compared in full, not through their short hash.
    return a.opaque.op_type == b.opaque.op_type && a.opaque.domain == b.opaque.domain &&
           a.opaque.attributes == b.opaque.attributes &&
           a.opaque.output_types == b.opaque.output_types && a.opaque.opset == b.opaque.opset &&
           a.opaque.input_slots == b.opaque.input_slots && a.opaque.output_slots == b.opaque.output_slots;
  }
  return CanonicalParams(kind, a) == CanonicalParams(kind, b);
}

bool OperandsCommute(OpKind kind) { return kind == OpKind::kEwAdd || kind == OpKind::kEwMul; }

bool IsLoadTimeConstant(OpKind kind) {
  switch (kind) {
    case OpKind::kConstPool:
    case OpKind::kConstIConv:
    case OpKind::kConstIMatMul:
    case OpKind::kConstOnes:
      return true;
    default:
      return false;
  }
}

}  // namespace taso
