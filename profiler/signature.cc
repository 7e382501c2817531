#include "profiler/signature.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

}  // namespace

absl::StatusOr<CanonicalSignature> Canonicalize(const Signature& signature) {
  const OpKind kind = signature.kind;
  if (kind < OpKind::kInput || kind > OpKind::kOpaque) {
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
  std::vector<std::string> shapes;
  for (const TensorType& t : c.op.inputs) shapes.push_back(t.ToString());
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
  if (kind < static_cast<int>(OpKind::kInput) || kind > static_cast<int>(OpKind::kOpaque)) {
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
  return s;
}

OpSignature SignatureToProto(const Signature& signature) {
  OpSignature proto;
  proto.set_kind(static_cast<ir::OpKind>(signature.kind));
  *proto.mutable_params() = OpParamsToProto(signature.kind, signature.params);
  for (const TensorType& t : signature.inputs) *proto.add_inputs() = TensorTypeToProto(t);
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
