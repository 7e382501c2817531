#include "optimizer/onnx/onnx_shape_folding.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "optimizer/onnx/onnx_common.h"

namespace taso::onnx_internal {
namespace {

// Shape operands are a handful of integers; anything larger is data.
constexpr int64_t kMaxFoldedElements = 1024;

using Known = std::map<std::string, FoldedInts>;
using Folded = std::optional<FoldedInts>;

bool IsIntType(int32_t t) { return t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32; }

std::optional<FoldedInts> FromTensor(const onnx::TensorProto& t) {
  if (!IsIntType(t.data_type()) || HasExternalData(t)) return std::nullopt;
  const int64_t n = NumElements(t);
  if (n < 0 || n > kMaxFoldedElements) return std::nullopt;
  auto ints = TensorInts(t);
  if (!ints.ok() || static_cast<int64_t>(ints->size()) != n) return std::nullopt;
  return FoldedInts{t.data_type(), {t.dims().begin(), t.dims().end()}, *std::move(ints)};
}

onnx::TensorProto ToTensor(const std::string& name, const FoldedInts& f) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(f.elem_type);
  for (int64_t d : f.dims) t.add_dims(d);
  for (int64_t v : f.values) {
    if (f.elem_type == onnx::TensorProto::INT64) {
      t.add_int64_data(v);
    } else {
      t.add_int32_data(static_cast<int32_t>(v));
    }
  }
  return t;
}

// Fully known static shapes from the inferred model's value_info.
std::map<std::string, std::vector<int64_t>> StaticShapes(const onnx::GraphProto& g) {
  std::map<std::string, std::vector<int64_t>> shapes;
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() < 0) return;
      dims.push_back(d.dim_value());
    }
    shapes[v.name()] = std::move(dims);
  };
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& v : g.output()) add(v);
  return shapes;
}

int64_t Rank(const FoldedInts& f) { return static_cast<int64_t>(f.dims.size()); }

// Elementwise integer arithmetic where one side has a single element or both
// have the same shape (what shape computations use).
Folded FoldArithmetic(const std::string& op, const FoldedInts& a, const FoldedInts& b) {
  const bool same = a.dims == b.dims && a.values.size() == b.values.size();
  if (a.values.empty() || b.values.empty()) return std::nullopt;  // e.g. the shape of a scalar
  if (!same && a.values.size() != 1 && b.values.size() != 1) return std::nullopt;
  const FoldedInts& shaped = (same || b.values.size() == 1) && Rank(a) >= Rank(b) ? a : b;
  FoldedInts out{a.elem_type, shaped.dims, {}};
  const size_t n = std::max(a.values.size(), b.values.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = a.values[a.values.size() == 1 ? 0 : i];
    const int64_t y = b.values[b.values.size() == 1 ? 0 : i];
    // Overflow (or INT64_MIN / -1) is not folded: the value stays unknown.
    int64_t v = 0;
    if (op == "Add" && __builtin_add_overflow(x, y, &v)) return std::nullopt;
    if (op == "Sub" && __builtin_sub_overflow(x, y, &v)) return std::nullopt;
    if (op == "Mul" && __builtin_mul_overflow(x, y, &v)) return std::nullopt;
    if (op == "Div") {
      if (y == 0 || (y == -1 && x == std::numeric_limits<int64_t>::min())) return std::nullopt;
      v = x / y;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") out.values.push_back(v);
  }
  return out;
}

Folded FoldGather(const onnx::NodeProto& node, const FoldedInts& data, const FoldedInts& indices) {
  if (Rank(data) != 1 || IntAttribute(node, "axis", 0) != 0) return std::nullopt;
  FoldedInts out{data.elem_type, indices.dims, {}};
  const int64_t n = static_cast<int64_t>(data.values.size());
  for (int64_t i : indices.values) {
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;
    out.values.push_back(data.values[i]);
  }
  return out;
}

// Rank-1 Slice along axis 0 (Shape→Slice, as in x.shape[2:]).
Folded FoldSlice(const FoldedInts& data, const std::vector<const FoldedInts*>& operands) {
  if (Rank(data) != 1 || operands.size() < 2 || !operands[0] || !operands[1]) return std::nullopt;
  if (operands[0]->values.size() != 1 || operands[1]->values.size() != 1) return std::nullopt;
  if (operands.size() > 2 && operands[2] &&
      (operands[2]->values.size() != 1 || (operands[2]->values[0] != 0 && operands[2]->values[0] != -1))) {
    return std::nullopt;
  }
  if (operands.size() > 3 && operands[3] && (operands[3]->values.size() != 1 || operands[3]->values[0] != 1)) {
    return std::nullopt;
  }
  const int64_t n = static_cast<int64_t>(data.values.size());
  auto clamp = [n](int64_t v) { return std::clamp(v < 0 ? v + n : v, int64_t{0}, n); };
  const int64_t begin = clamp(operands[0]->values[0]), end = std::max(begin, clamp(operands[1]->values[0]));
  FoldedInts out{data.elem_type, {end - begin}, {}};
  out.values.assign(data.values.begin() + begin, data.values.begin() + end);
  return out;
}

Folded FoldUnsqueezeOrSqueeze(const onnx::NodeProto& node, const FoldedInts& x, const FoldedInts* axes_input) {
  std::vector<int64_t> axes = axes_input ? axes_input->values : IntsAttribute(node, "axes");
  const bool unsqueeze = node.op_type() == "Unsqueeze";
  const int64_t out_rank = unsqueeze ? Rank(x) + static_cast<int64_t>(axes.size()) : Rank(x);
  for (int64_t& a : axes) {
    a = a < 0 ? a + out_rank : a;
    if (a < 0 || a >= out_rank) return std::nullopt;  // an invalid model: left to shape inference to reject
  }
  FoldedInts out{x.elem_type, {}, x.values};
  if (unsqueeze) {
    std::set<int64_t> at(axes.begin(), axes.end());
    if (static_cast<int64_t>(at.size()) != static_cast<int64_t>(axes.size())) return std::nullopt;
    for (int64_t i = 0, j = 0; i < out_rank; ++i) out.dims.push_back(at.count(i) ? 1 : x.dims[j++]);
    return out;
  }
  for (int64_t i = 0; i < Rank(x); ++i) {
    const bool drop = axes.empty() ? x.dims[i] == 1 : std::count(axes.begin(), axes.end(), i) > 0;
    if (drop && x.dims[i] != 1) return std::nullopt;
    if (!drop) out.dims.push_back(x.dims[i]);
  }
  return out;
}

Folded FoldConcat(const onnx::NodeProto& node, const std::vector<const FoldedInts*>& in) {
  const int64_t axis = IntAttribute(node, "axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  FoldedInts out{0, {0}, {}};
  for (const FoldedInts* f : in) {
    if (!f || Rank(*f) != 1) return std::nullopt;
    out.elem_type = f->elem_type;
    out.values.insert(out.values.end(), f->values.begin(), f->values.end());
  }
  out.dims[0] = static_cast<int64_t>(out.values.size());
  return out;
}

// One node's output from its operands, or nullopt when it does not fold.
Folded FoldNode(const onnx::NodeProto& node, const Known& known,
                const std::map<std::string, std::vector<int64_t>>& shapes) {
  const std::string& op = node.op_type();
  if (op == "Shape") {
    auto it = node.input_size() == 1 ? shapes.find(node.input(0)) : shapes.end();
    if (it == shapes.end() || FindAttribute(node, "start") || FindAttribute(node, "end")) return std::nullopt;
    return FoldedInts{onnx::TensorProto::INT64, {static_cast<int64_t>(it->second.size())}, it->second};
  }
  std::vector<const FoldedInts*> in;
  // Every operand given must be known; omitted optional ones are null.
  for (const std::string& name : node.input()) {
    auto it = known.find(name);
    if (!name.empty() && it == known.end()) return std::nullopt;
    in.push_back(name.empty() ? nullptr : &it->second);
  }
  if (in.empty() || !in[0]) return std::nullopt;
  if (op == "Identity") return *in[0];
  if (op == "Cast") {
    const int64_t to = IntAttribute(node, "to", 0);
    if (!IsIntType(static_cast<int32_t>(to))) return std::nullopt;
    FoldedInts out = *in[0];
    out.elem_type = static_cast<int32_t>(to);
    return out;
  }
  if (op == "Concat") return FoldConcat(node, in);
  if (op == "Unsqueeze" || op == "Squeeze") {
    if (in.size() > 1 && !in[1]) return std::nullopt;
    return FoldUnsqueezeOrSqueeze(node, *in[0], in.size() > 1 ? in[1] : nullptr);
  }
  if (op == "Slice") return FoldSlice(*in[0], std::vector<const FoldedInts*>(in.begin() + 1, in.end()));
  if (in.size() != 2 || !in[1]) return std::nullopt;
  if (op == "Gather") return FoldGather(node, *in[0], *in[1]);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (in[0]->elem_type != in[1]->elem_type) return std::nullopt;
    return FoldArithmetic(op, *in[0], *in[1]);
  }
  return std::nullopt;
}

}  // namespace

std::map<std::string, FoldedInts> FoldShapeArithmetic(onnx::ModelProto& model, const onnx::ModelProto& inferred) {
  onnx::GraphProto* g = model.mutable_graph();
  const auto shapes = StaticShapes(inferred.graph());
  Known known;
  for (const auto& t : g->initializer()) {
    if (auto f = FromTensor(t)) known[t.name()] = *std::move(f);
  }
  Known folded;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto& node : *g->mutable_node()) {
    if (!IsDefaultDomain(node.domain()) || node.output_size() != 1 || node.output(0).empty()) {
      kept.Add()->Swap(&node);
      continue;
    }
    if (node.op_type() == "Constant") {
      if (auto value = ConstantNodeValue(node)) {
        if (auto f = FromTensor(*value)) known[node.output(0)] = *std::move(f);
      }
      kept.Add()->Swap(&node);
      continue;
    }
    Folded f = FoldNode(node, known, shapes);
    if (!f || static_cast<int64_t>(f->values.size()) > kMaxFoldedElements) {
      kept.Add()->Swap(&node);
      continue;
    }
    known[node.output(0)] = *f;
    folded[node.output(0)] = *std::move(f);
  }
  g->mutable_node()->Swap(&kept);
  for (const auto& [name, f] : folded) *g->add_initializer() = ToTensor(name, f);
  return folded;
}

}  // namespace taso::onnx_internal
