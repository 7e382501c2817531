#include "onnx_io/onnx_common.h"

#include <climits>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "onnx/checker.h"

namespace taso::onnx_internal {

std::optional<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT: return DType::kFloat32;
    case onnx::TensorProto::INT32: return DType::kInt32;
    case onnx::TensorProto::INT64: return DType::kInt64;
    case onnx::TensorProto::FLOAT16: return DType::kFloat16;
    case onnx::TensorProto::BOOL: return DType::kBool;
    default: return std::nullopt;
  }
}

int32_t OnnxElemType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return onnx::TensorProto::FLOAT;
    case DType::kInt32: return onnx::TensorProto::INT32;
    case DType::kInt64: return onnx::TensorProto::INT64;
    case DType::kFloat16: return onnx::TensorProto::FLOAT16;
    case DType::kBool: return onnx::TensorProto::BOOL;
    case DType::kUnspecified: break;
  }
  return onnx::TensorProto::UNDEFINED;
}

int64_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kInt64: return 8;
    case DType::kFloat16: return 2;
    case DType::kBool: return 1;
    default: return 4;
  }
}

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

int64_t DomainOpset(const onnx::ModelProto& model, const std::string& domain) {
  for (const auto& o : model.opset_import()) {
    if (o.domain() == domain || (IsDefaultDomain(o.domain()) && IsDefaultDomain(domain))) return o.version();
  }
  return 0;
}

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (IsDefaultDomain(opset.domain())) return opset.version();
  }
  return 0;
}

std::string DescribeOnnxNode(const onnx::NodeProto& node, int index) {
  if (!node.name().empty()) return absl::StrCat("node '", node.name(), "' (", node.op_type(), ")");
  return absl::StrCat("node #", index, " (", node.op_type(), ")");
}

int64_t NumElements(const onnx::TensorProto& tensor) {
  int64_t n = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

bool HasExternalData(const onnx::TensorProto& tensor) {
  return tensor.data_location() == onnx::TensorProto::EXTERNAL;
}

namespace {

// How many values the typed repeated field for this element type holds.
int64_t TypedFieldSize(const onnx::TensorProto& t, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return t.float_data_size();
    case DType::kInt64: return t.int64_data_size();
    default: return t.int32_data_size();  // int32, and float16/bool stored widened
  }
}

}  // namespace

bool IsRepresentableConstant(const onnx::TensorProto& tensor) {
  const std::optional<DType> dtype = DTypeFromOnnx(tensor.data_type());
  if (!dtype || HasExternalData(tensor)) return false;
  for (int64_t d : tensor.dims()) {
    if (d < 1) return false;  // the IR has no zero-sized weights
  }
  const int64_t n = NumElements(tensor);
  if (tensor.has_raw_data()) return static_cast<int64_t>(tensor.raw_data().size()) == n * DTypeBytes(*dtype);
  return TypedFieldSize(tensor, *dtype) == n;
}

absl::StatusOr<std::string> TensorBytes(const onnx::TensorProto& tensor) {
  const std::optional<DType> dtype = DTypeFromOnnx(tensor.data_type());
  if (!dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor.name(), "' has element type ", tensor.data_type(), ", which the IR cannot hold"));
  }
  if (HasExternalData(tensor)) {
    return absl::UnimplementedError(absl::StrCat("tensor '", tensor.name(), "' keeps its data in an external file"));
  }
  if (absl::Status s = CheckDims({tensor.dims().begin(), tensor.dims().end()}); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "': ", s.message()));
  }
  const int64_t n = NumElements(tensor);
  const int64_t width = DTypeBytes(*dtype);
  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) != n * width) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' has ", tensor.raw_data().size(),
                                                     " raw bytes, its shape needs ", n * width));
    }
    return tensor.raw_data();
  }
  if (TypedFieldSize(tensor, *dtype) != n) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' holds ",
                                                   TypedFieldSize(tensor, *dtype), " values, its shape needs ", n));
  }
  std::string bytes(n * width, '\0');
  char* out = bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (*dtype) {
      case DType::kFloat32: {
        const float v = tensor.float_data(i);
        std::memcpy(out + i * 4, &v, 4);
        break;
      }
      case DType::kInt64: {
        const int64_t v = tensor.int64_data(i);
        std::memcpy(out + i * 8, &v, 8);
        break;
      }
      case DType::kInt32: {
        const int32_t v = tensor.int32_data(i);
        std::memcpy(out + i * 4, &v, 4);
        break;
      }
      case DType::kFloat16: {
        const uint16_t v = static_cast<uint16_t>(tensor.int32_data(i));  // the bits, widened
        std::memcpy(out + i * 2, &v, 2);
        break;
      }
      case DType::kBool:
        out[i] = tensor.int32_data(i) != 0 ? 1 : 0;
        break;
      case DType::kUnspecified:
        break;
    }
  }
  return bytes;
}

absl::StatusOr<std::vector<int64_t>> TensorInts(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::INT64 && tensor.data_type() != onnx::TensorProto::INT32) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' is not an integer tensor"));
  }
  const int64_t n = NumElements(tensor);
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor.name(), "' has a negative dimension"));
  std::vector<int64_t> values;
  if (n == 0) return values;
  auto bytes = TensorBytes(tensor);
  if (!bytes.ok()) return bytes.status();
  values.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    if (tensor.data_type() == onnx::TensorProto::INT64) {
      std::memcpy(&values[i], bytes->data() + i * 8, 8);
    } else {
      int32_t v;
      std::memcpy(&v, bytes->data() + i * 4, 4);
      values[i] = v;
    }
  }
  return values;
}

namespace {

// A Constant's literal value (float or int64): a scalar, or a 1-D list when
// `is_list`.
template <typename T>
onnx::TensorProto Literal(const std::vector<T>& values, bool is_list) {
  onnx::TensorProto t;
  if (is_list) t.add_dims(static_cast<int64_t>(values.size()));
  if constexpr (std::is_same_v<T, float>) {
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (float v : values) t.add_float_data(v);
  } else {
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t v : values) t.add_int64_data(v);
  }
  return t;
}

}  // namespace

std::optional<onnx::TensorProto> ConstantNodeValue(const onnx::NodeProto& node) {
  onnx::TensorProto t;
  if (const auto* a = FindAttribute(node, "value")) {
    t = a->t();
  } else if (const auto* a = FindAttribute(node, "value_float")) {
    t = Literal<float>({a->f()}, /*is_list=*/false);
  } else if (const auto* a = FindAttribute(node, "value_floats")) {
    t = Literal<float>({a->floats().begin(), a->floats().end()}, /*is_list=*/true);
  } else if (const auto* a = FindAttribute(node, "value_int")) {
    t = Literal<int64_t>({a->i()}, /*is_list=*/false);
  } else if (const auto* a = FindAttribute(node, "value_ints")) {
    t = Literal<int64_t>({a->ints().begin(), a->ints().end()}, /*is_list=*/true);
  } else {
    return std::nullopt;  // strings and sparse values: the node stays opaque
  }
  if (node.output_size() > 0) t.set_name(node.output(0));
  return t;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* a = FindAttribute(node, name);
  return a ? a->i() : fallback;
}

float FloatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const auto* a = FindAttribute(node, name);
  return a ? a->f() : fallback;
}

std::string StringAttribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback) {
  const auto* a = FindAttribute(node, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node, const std::string& name) {
  const auto* a = FindAttribute(node, name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

onnx::AttributeProto MakeIntAttribute(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto MakeIntsAttribute(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

onnx::AttributeProto MakeFloatAttribute(const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

onnx::AttributeProto MakeStringAttribute(const std::string& name, const std::string& value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(value);
  return a;
}

onnx::AttributeProto MakeTensorAttribute(const std::string& name, const onnx::TensorProto& value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = value;
  return a;
}

std::set<std::string> NodeOuterScopeNames(const onnx::NodeProto& node) {
  std::set<std::string> names;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) names.merge(OuterScopeNames(a.g()));
    for (const auto& g : a.graphs()) names.merge(OuterScopeNames(g));
  }
  return names;
}

std::set<std::string> OuterScopeNames(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const auto& v : graph.input()) defined.insert(v.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& s : graph.sparse_initializer()) defined.insert(s.values().name());
  for (const auto& n : graph.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }
  std::set<std::string> outer;
  for (const auto& n : graph.node()) {
    for (const auto& i : n.input()) {
      if (!i.empty() && !defined.count(i)) outer.insert(i);
    }
    for (const std::string& name : NodeOuterScopeNames(n)) {
      if (!defined.count(name)) outer.insert(name);
    }
  }
  for (const auto& o : graph.output()) {
    if (!defined.count(o.name())) outer.insert(o.name());
  }
  return outer;
}

void CollectValueNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
  for (const auto& v : graph.input()) names.insert(v.name());
  for (const auto& v : graph.output()) names.insert(v.name());
  for (const auto& v : graph.value_info()) names.insert(v.name());
  for (const auto& t : graph.initializer()) names.insert(t.name());
  for (const auto& s : graph.sparse_initializer()) names.insert(s.values().name());
  for (const auto& n : graph.node()) {
    names.insert(n.input().begin(), n.input().end());
    names.insert(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectValueNames(a.g(), names);
      for (const auto& g : a.graphs()) CollectValueNames(g, names);
    }
  }
}

absl::StatusOr<onnx::ModelProto> ParseModelBytes(const std::string& bytes, const std::string& not_a_model) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("the model is over 2 GiB, which protobuf cannot parse");
  }
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError(not_a_model);
  }
  return model;
}

void EraseAttribute(onnx::NodeProto& node, const std::string& name) {
  auto* attributes = node.mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i) {
    if (attributes->Get(i).name() == name) attributes->DeleteSubrange(i, 1);
  }
}

absl::Status RunOnnxChecker(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const onnx::checker::ValidationError& e) {
    return absl::InvalidArgumentError(e.what());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return absl::OkStatus();
}

}  // namespace taso::onnx_internal
