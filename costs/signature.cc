#include "costs/signature.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"
#include "core/op_registry.h"

namespace taso::profiler {
namespace {

// The input as a kernel sees it: dims, dtype and layout, no split records.
TensorType StripSplits(const TensorType& t) {
  TensorType out = t;
  out.split.assign(t.dims.size(), nullptr);
  return out;
}

bool KnownDims(const TensorType& t) {
  for (int64_t d : t.dims) {
    if (d < 0) return false;
  }
  return true;
}

template <typename T>
T Element(const std::string& data, int64_t i) {
  T v;
  std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
  return v;
}

// "[1,1,32]" (a scalar without brackets): exact, so equal text is equal
// values (floats to 9 significant digits, float16 as its bits).
std::string ValueText(const TensorType& type, const std::string& data) {
  std::vector<std::string> items;
  const int64_t n = type.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    switch (type.dtype) {
      case DType::kInt64: items.push_back(absl::StrCat(Element<int64_t>(data, i))); break;
      case DType::kInt32: items.push_back(absl::StrCat(Element<int32_t>(data, i))); break;
      case DType::kBool: items.push_back(absl::StrCat(Element<uint8_t>(data, i) != 0 ? 1 : 0)); break;
      case DType::kFloat16: items.push_back(absl::StrFormat("0x%04x", Element<uint16_t>(data, i))); break;
      default: items.push_back(absl::StrFormat("%.9g", Element<float>(data, i))); break;
    }
  }
  return type.rank() == 0 ? items[0] : absl::StrCat("[", absl::StrJoin(items, ","), "]");
}

// An opaque signature's constant operands are in range and of their inputs'
// sizes, and only carry values where CarriesValue says.
absl::Status CheckConstantOperands(const Signature& s) {
  for (const auto& [input, data] : s.constant_inputs) {
    if (input < 0 || input >= static_cast<int>(s.inputs.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant operand ", input, ": the operator has ", s.inputs.size(), " inputs"));
    }
    if (data.empty()) continue;
    const TensorType& t = s.inputs[input];
    if (!CarriesValue(t)) {
      return absl::InvalidArgumentError(absl::StrCat("constant operand ", input, " (", t.ToString(),
                                                     ") carries a value, which only small integer tensors and "
                                                     "floating-point scalars do"));
    }
    if (static_cast<int64_t>(data.size()) != t.num_elements() * ElementBytes(t.dtype)) {
      return absl::InvalidArgumentError(absl::StrCat("constant operand ", input, " (", t.ToString(), ") has ",
                                                     data.size(), " bytes of value"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t ElementBytes(DType dtype) {
  switch (dtype) {
    case DType::kInt64: return 8;
    case DType::kFloat16: return 2;
    case DType::kBool: return 1;
    default: return 4;
  }
}

bool CarriesValue(const TensorType& type) {
  if (!KnownDims(type)) return false;
  const int64_t n = type.num_elements();
  switch (type.dtype) {
    case DType::kInt64:
    case DType::kInt32:
    case DType::kBool: return n <= kMaxCarriedElements;
    case DType::kFloat32:
    case DType::kFloat16: return n == 1;
    default: return false;
  }
}

void AddConstantOperand(Signature& signature, int input, const std::shared_ptr<const std::string>& data) {
  if (signature.kind != OpKind::kOpaque || input < 0 || input >= static_cast<int>(signature.inputs.size())) return;
  const TensorType& t = signature.inputs[input];
  const bool carried = data != nullptr && CarriesValue(t) &&
                       static_cast<int64_t>(data->size()) == t.num_elements() * ElementBytes(t.dtype);
  signature.constant_inputs[input] = carried ? *data : std::string();
}

Signature NodeSignature(const Graph& graph, const Node& node) {
  Signature sig{node.kind, node.params, {}, {}};
  for (const TensorRef& in : node.inputs) sig.inputs.push_back(graph.type(in));
  if (node.kind != OpKind::kOpaque) return sig;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Node& producer = graph.node(node.inputs[i].node);
    if (producer.kind == OpKind::kWeight) AddConstantOperand(sig, static_cast<int>(i), producer.data);
  }
  return sig;
}

absl::StatusOr<CanonicalSignature> Canonicalize(const Signature& signature) {
  const OpKind kind = signature.kind;
  if (kind < OpKind::kInput || kind > kLastOpKind) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown operator kind ", static_cast<int>(kind)));
  }
  if (kind == OpKind::kInput || kind == OpKind::kWeight) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpKindName(kind), " is data, not an operator: it has no cost to measure"));
  }
  // Shape inference on the inputs as given (split records included, since a
  // split without explicit sizes reads them) validates everything.
  auto outputs = InferOutputTypes(kind, signature.params, signature.inputs);
  if (!outputs.ok()) return outputs.status();

  CanonicalSignature c;
  c.op.kind = kind;
  c.op.params = signature.params;
  if (kind == OpKind::kSplit && c.op.params.sizes.empty()) {
    for (const TensorType& part : *outputs) c.op.params.sizes.push_back(part.dims[c.op.params.axis]);
  }
  for (const TensorType& t : signature.inputs) c.op.inputs.push_back(StripSplits(t));
  for (const TensorType& t : *outputs) c.outputs.push_back(StripSplits(t));
  if (kind == OpKind::kOpaque) {
    if (absl::Status s = CheckConstantOperands(signature); !s.ok()) return s;
    c.op.constant_inputs = signature.constant_inputs;
  }
  std::vector<std::string> shapes;
  for (size_t i = 0; i < c.op.inputs.size(); ++i) {
    shapes.push_back(c.op.inputs[i].ToString());
    auto constant = c.op.constant_inputs.find(static_cast<int>(i));
    if (constant == c.op.constant_inputs.end()) continue;
    absl::StrAppend(&shapes.back(), "=",
                    constant->second.empty() ? "const" : ValueText(c.op.inputs[i], constant->second));
  }
  c.key = absl::StrCat(OpLabel(kind, c.op.params), "(", absl::StrJoin(shapes, ","), ")");
  if (kind == OpKind::kSplit) {
    // OpLabel shows the axis only; the sizes decide the work.
    c.key += absl::StrCat("->[", absl::StrJoin(c.op.params.sizes, ","), "]");
  }
  if (IsLoadTimeConstant(kind)) c.key += DimsToString(c.op.params.shape);
  return c;
}

absl::StatusOr<Signature> SignatureFromProto(const OpSignature& proto) {
  Signature s;
  const int kind = static_cast<int>(proto.kind());
  if (kind < static_cast<int>(OpKind::kInput) || kind > static_cast<int>(kLastOpKind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown operator kind ", kind, " (", ir::OpKind_Name(proto.kind()), ")"));
  }
  s.kind = static_cast<OpKind>(kind);
  auto params = OpParamsFromProto(s.kind, proto.params());
  if (!params.ok()) return params.status();
  s.params = *params;
  for (int i = 0; i < proto.inputs_size(); ++i) {
    auto t = TensorTypeFromProto(proto.inputs(i));
    if (!t.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": ", t.status().message()));
    }
    s.inputs.push_back(*t);
  }
  for (const ConstantOperand& c : proto.constant_inputs()) s.constant_inputs[c.input()] = c.data();
  return s;
}

OpSignature SignatureToProto(const Signature& signature) {
  OpSignature proto;
  proto.set_kind(static_cast<ir::OpKind>(signature.kind));
  *proto.mutable_params() = OpParamsToProto(signature.kind, signature.params);
  for (const TensorType& t : signature.inputs) *proto.add_inputs() = TensorTypeToProto(t);
  for (const auto& [input, data] : signature.constant_inputs) {
    ConstantOperand* c = proto.add_constant_inputs();
    c->set_input(input);
    c->set_data(data);
  }
  return proto;
}

int64_t SignatureBytes(const CanonicalSignature& s) {
  int64_t elements = 0;
  for (const TensorType& t : s.op.inputs) elements += t.num_elements();
  for (const TensorType& t : s.outputs) elements += t.num_elements();
  return elements * 4;
}

int64_t SignatureFlops(const CanonicalSignature& s) {
  const Signature& op = s.op;
  const int64_t out = s.outputs.empty() ? 0 : s.outputs[0].num_elements();
  switch (op.kind) {
    case OpKind::kConv2D: {
      const auto& w = op.inputs[1].dims;  // Cout, Cin/groups, KH, KW
      // An optional bias (third input) adds one addition per output element.
      const int64_t bias = op.inputs.size() > 2 ? out : 0;
      return 2 * out * w[1] * w[2] * w[3] + bias;
    }
    case OpKind::kMatMul: {
      const TensorType& x = op.inputs[0];
      return 2 * out * x.dims[x.rank() - 1];
    }
    case OpKind::kFusedGemm: {
      // The product, the bias and the activation (as their own operators count them).
      const int64_t act = op.params.activation == Activation::kNone   ? 0
                          : op.params.activation == Activation::kRelu ? out
                                                                      : 4 * out;
      return 2 * out * op.inputs[0].dims[1] + out + act;
    }
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
      return out * op.params.kernel_h * op.params.kernel_w;
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
    case OpKind::kScalarMul:
    case OpKind::kRelu:
      return out;
    case OpKind::kTanh:
    case OpKind::kSigmoid:
      return 4 * out;  // an exponential and a division, roughly
    case OpKind::kBatchNorm:
      return 2 * out;
    default:
      return 0;  // data movement only
  }
}

}  // namespace taso::profiler
