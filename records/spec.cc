#include "records/spec.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/graph_proto.h"
#include "core/op_registry.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace taso::records {
namespace {

// Kinds whose parameters live in ir.OpParams; the others take none.
bool HasParams(OpKind kind) {
  switch (kind) {
    case OpKind::kConv2D:
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
    case OpKind::kMatMul:
    case OpKind::kFusedGemm:
    case OpKind::kTranspose:
    case OpKind::kConcat:
    case OpKind::kSplit:
    case OpKind::kReshape:
    case OpKind::kEnlarge:
    case OpKind::kMergeGConv:
      return true;
    default:
      return IsLoadTimeConstant(kind);  // their shape
  }
}

bool ValidName(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

absl::Status VariableError(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

absl::StatusOr<Variable> ConvertVariable(const generator::TensorSpec& t, bool is_weight, const std::string& where) {
  if (!ValidName(t.name())) {
    return VariableError(where, absl::StrCat("name '", t.name(), "' must be a letter or _ then letters, digits, _"));
  }
  if (t.dtype() != ir::DTYPE_UNSPECIFIED && t.dtype() != ir::DTYPE_FLOAT32) {
    return VariableError(where, "only DTYPE_FLOAT32 tensors are enumerated (fingerprinting uses int32 "
                                "arithmetic on float graphs); leave dtype unset");
  }
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t elements = 1;
  for (int64_t d : dims) {
    if (d < 1) return VariableError(where, absl::StrCat("dimension ", d, " in ", DimsToString(dims), " is < 1"));
    elements *= d;
    if (elements > kMaxTensorElements) {
      return VariableError(where, absl::StrCat("shape ", DimsToString(dims), " exceeds ", kMaxTensorElements,
                                               " elements; enumeration tensors must stay small"));
    }
  }
  return Variable{t.name(), TensorType::RowMajor(DType::kFloat32, dims), is_weight};
}

absl::Status CheckEnumerable(OpKind kind, const OpParams& params) {
  switch (kind) {
    case OpKind::kInput:
    case OpKind::kWeight:
      return absl::InvalidArgumentError("graph inputs are declared under inputs/constants, not operators");
    case OpKind::kOpaque:
      return absl::InvalidArgumentError("opaque operators have no semantics to enumerate");
    case OpKind::kTanh:
    case OpKind::kSigmoid:
    case OpKind::kBatchNorm:
      return absl::InvalidArgumentError("has no integer semantics, so it cannot be fingerprinted");
    case OpKind::kConv2D:
    case OpKind::kMatMul:
    case OpKind::kFusedGemm:
      if (params.activation == Activation::kTanh || params.activation == Activation::kSigmoid) {
        return absl::InvalidArgumentError(absl::StrCat("activation ", ActivationName(params.activation),
                                                       " has no integer semantics"));
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

absl::StatusOr<Spec> SpecFromProto(const generator::GenerationSpec& proto) {
  Spec spec;
  if (proto.version() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec version ", proto.version(), " is newer than this build understands (1)"));
  }
  if (proto.max_ops() < 0 || proto.max_ops() > kMaxOpsLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_ops ", proto.max_ops(), " is outside 1..", kMaxOpsLimit));
  }
  spec.max_ops = proto.max_ops() == 0 ? 3 : proto.max_ops();
  spec.seed = proto.seed();

  std::set<std::string> names;
  auto add_variables = [&](const auto& list, bool is_weight, const char* field) -> absl::Status {
    for (int i = 0; i < list.size(); ++i) {
      const std::string where = absl::StrCat(field, "[", i, "] '", list[i].name(), "'");
      auto v = ConvertVariable(list[i], is_weight, where);
      if (!v.ok()) return v.status();
      if (!names.insert(v->name).second) return VariableError(where, "name used twice");
      spec.variables.push_back(*std::move(v));
    }
    return absl::OkStatus();
  };
  if (auto s = add_variables(proto.inputs(), false, "inputs"); !s.ok()) return s;
  if (auto s = add_variables(proto.constants(), true, "constants"); !s.ok()) return s;
  if (spec.variables.empty()) return absl::InvalidArgumentError("the spec declares no inputs or constants");

  std::set<std::string> seen;
  for (int i = 0; i < proto.operators_size(); ++i) {
    const generator::OperatorTemplate& op = proto.operators(i);
    if (op.kind() == ir::OP_UNSPECIFIED || !ir::OpKind_IsValid(op.kind())) {
      return absl::InvalidArgumentError(absl::StrCat("operators[", i, "]: no valid kind"));
    }
    const OpKind kind = static_cast<OpKind>(op.kind());
    const std::string where = absl::StrCat("operators[", i, "] (", OpKindName(kind), ")");
    if (op.max_uses() < 0) return VariableError(where, "max_uses must be >= 0");
    const OpInfo& info = GetOpInfo(kind);
    if (op.unordered_operands() && !(info.max_inputs == 2 || kind == OpKind::kConcat)) {
      return VariableError(where, "unordered_operands applies to binary operators only");
    }
    if (op.broadcast() && kind != OpKind::kEwAdd && kind != OpKind::kEwMul) {
      return VariableError(where, "broadcast applies to ewadd and ewmul only");
    }
    if (op.kernels_size() > 0 && kind != OpKind::kConv2D) {
      return VariableError(where, "kernels applies to conv2d only");
    }
    std::vector<std::pair<int, int>> kernels;
    for (const generator::KernelSize& k : op.kernels()) {
      if (k.height() < 1 || k.width() < 1) {
        return VariableError(where, absl::StrCat("kernel ", k.height(), "x", k.width(), " is not positive"));
      }
      kernels.emplace_back(k.height(), k.width());
    }
    std::vector<ir::OpParams> settings(op.params().begin(), op.params().end());
    if (settings.empty()) settings.emplace_back();
    for (size_t j = 0; j < settings.size(); ++j) {
      const std::string at = op.params_size() > 1 ? absl::StrCat(where, " params[", j, "]") : where;
      if (!HasParams(kind) && settings[j].params_case() != ir::OpParams::PARAMS_NOT_SET) {
        return VariableError(at, "takes no parameters");
      }
      auto params = OpParamsFromProto(kind, settings[j]);
      if (!params.ok()) return VariableError(at, std::string(params.status().message()));
      if (auto s = CheckEnumerable(kind, *params); !s.ok()) return VariableError(at, std::string(s.message()));
      if (GetOpInfo(kind).is_source) {
        auto types = InferOutputTypes(kind, *params, {});
        if (!types.ok()) return VariableError(at, std::string(types.status().message()));
      }
      Template t{kind, *params, op.max_uses(), OpLabel(kind, *params), op.unordered_operands(), kernels, op.broadcast()};
      if (!seen.insert(t.label).second) return VariableError(at, absl::StrCat(t.label, " is listed twice"));
      spec.templates.push_back(std::move(t));
    }
  }
  if (spec.templates.empty()) return absl::InvalidArgumentError("the spec lists no operators");
  return spec;
}

absl::StatusOr<Spec> ParseSpecText(const std::string& text, const std::string& source) {
  generator::GenerationSpec proto;
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &proto)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a valid taso.generator.GenerationSpec: ", errors.first()));
  }
  auto spec = SpecFromProto(proto);
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat(source, ": ", spec.status().message()));
  return spec;
}

absl::StatusOr<Spec> LoadSpecFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read spec file ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseSpecText(buf.str(), path);
}

}  // namespace taso::records
