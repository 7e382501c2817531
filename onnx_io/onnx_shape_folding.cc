#include "onnx_io/onnx_shape_folding.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include "onnx_io/onnx_common.h"
#include "onnx_io/onnx_versions.h"

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

// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

// Slice along any axes with any steps, as ONNX defines it (x.shape[2:], and
// PyTorch's reversal of its pad list with step -1).
Folded FoldSlice(const FoldedInts& data, const std::vector<const FoldedInts*>& operands) {
  if (operands.size() < 2 || !operands[0] || !operands[1]) return std::nullopt;
  const std::vector<int64_t>& starts = operands[0]->values;
  const std::vector<int64_t>& ends = operands[1]->values;
  const int64_t rank = Rank(data);
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (operands.size() > 2 && operands[2]) axes = operands[2]->values;
  if (operands.size() > 3 && operands[3]) steps = operands[3]->values;
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) return std::nullopt;
  std::vector<int64_t> begin(rank, 0), step(rank, 1), count = data.dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank || steps[i] == 0) return std::nullopt;
    const int64_t n = data.dims[axis];
    auto resolve = [n](int64_t v) { return v < 0 ? v + n : v; };
    int64_t b = resolve(starts[i]), e = resolve(ends[i]);
    if (steps[i] > 0) {
      b = std::clamp(b, int64_t{0}, n);
      e = std::clamp(e, int64_t{0}, n);
      count[axis] = e > b ? (e - b + steps[i] - 1) / steps[i] : 0;
    } else {
      b = std::clamp(b, int64_t{-1}, n - 1);
      e = std::clamp(e, int64_t{-1}, n - 1);
      count[axis] = b > e ? (b - e - steps[i] - 1) / -steps[i] : 0;
    }
    begin[axis] = b;
    step[axis] = steps[i];
  }
  FoldedInts out{data.elem_type, count, {}};
  const std::vector<int64_t> in_strides = Strides(data.dims);
  int64_t total = 1;
  for (int64_t c : count) total *= c;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, source = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t index = rest % count[d];
      rest /= count[d];
      source += (begin[d] + index * step[d]) * in_strides[d];
    }
    out.values.push_back(data.values[source]);
  }
  return out;
}

Folded FoldTranspose(const onnx::NodeProto& node, const FoldedInts& data) {
  const int64_t rank = Rank(data);
  std::vector<int64_t> perm = IntsAttribute(node, "perm");
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
  std::vector<int64_t> dims(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank) return std::nullopt;
    dims[i] = data.dims[perm[i]];
  }
  const std::vector<int64_t> in_strides = Strides(data.dims);
  FoldedInts out{data.elem_type, dims, {}};
  for (int64_t flat = 0; flat < static_cast<int64_t>(data.values.size()); ++flat) {
    int64_t rest = flat, source = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      source += (rest % dims[d]) * in_strides[perm[d]];
      rest /= dims[d];
    }
    out.values.push_back(data.values[source]);
  }
  return out;
}

// Reshape (0 copies the input's dimension, -1 takes what is left).
Folded FoldReshape(const FoldedInts& data, const FoldedInts& shape) {
  std::vector<int64_t> dims = shape.values;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) {
      if (i >= data.dims.size()) return std::nullopt;
      dims[i] = data.dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
    } else if (dims[i] < 0) {
      return std::nullopt;
    } else {
      known *= dims[i];
    }
  }
  const int64_t n = static_cast<int64_t>(data.values.size());
  if (infer >= 0) {
    if (known == 0 || n % known != 0) return std::nullopt;
    dims[infer] = n / known;
  } else if (known != n) {
    return std::nullopt;
  }
  return FoldedInts{data.elem_type, dims, data.values};
}

// ConstantOfShape with an integer value (PyTorch's zero padding of its pad list).
Folded FoldConstantOfShape(const onnx::NodeProto& node, const FoldedInts& shape) {
  const onnx::AttributeProto* value = FindAttribute(node, "value");
  if (value == nullptr || !value->has_t()) return std::nullopt;
  auto fill = TensorInts(value->t());
  if (!fill.ok() || fill->size() != 1 || !IsIntType(value->t().data_type())) return std::nullopt;
  int64_t total = 1;
  for (int64_t d : shape.values) {
    if (d < 0 || d > kMaxFoldedElements) return std::nullopt;
    total *= d;
  }
  if (total > kMaxFoldedElements) return std::nullopt;
  return FoldedInts{value->t().data_type(), shape.values, std::vector<int64_t>(total, (*fill)[0])};
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
  if (op == "Transpose") return FoldTranspose(node, *in[0]);
  if (op == "ConstantOfShape") return FoldConstantOfShape(node, *in[0]);
  if (in.size() != 2 || !in[1]) return std::nullopt;
  if (op == "Gather") return FoldGather(node, *in[0], *in[1]);
  if (op == "Reshape") return FoldReshape(*in[0], *in[1]);
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

namespace taso::onnx_internal {
namespace {

// Pads for every axis from opset 18's pads for the axes listed.
std::optional<std::vector<int64_t>> PadsForEveryAxis(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                                                     int64_t rank) {
  if (pads.size() != 2 * axes.size()) return std::nullopt;
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return std::nullopt;
    full[axis] = pads[i];
    full[rank + axis] = pads[axes.size() + i];
  }
  return full;
}

// Resize's scales or sizes for every axis from those for the axes listed
// (the others keep their size: scale 1, size the input's).
template <typename T>
std::optional<std::vector<T>> ForEveryAxis(const std::vector<T>& given, const std::vector<int64_t>& axes,
                                           const std::vector<T>& unchanged) {
  const int64_t rank = static_cast<int64_t>(unchanged.size());
  if (given.size() != axes.size()) return std::nullopt;
  std::vector<T> full = unchanged;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return std::nullopt;
    full[axis] = given[i];
  }
  return full;
}

}  // namespace

int NormalizeBridgedNodes(onnx::ModelProto& model, const onnx::ModelProto& inferred) {
  onnx::GraphProto* g = model.mutable_graph();
  const auto shapes = StaticShapes(inferred.graph());
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : g->initializer()) constants[t.name()] = &t;
  std::vector<onnx::TensorProto> added;
  auto constant = [&](const onnx::NodeProto& node, int i) -> const onnx::TensorProto* {
    if (node.input_size() <= i || node.input(i).empty()) return nullptr;
    auto it = constants.find(node.input(i));
    return it == constants.end() ? nullptr : it->second;
  };
  for (auto& node : *g->mutable_node()) {
    if (node.domain() != kUnknownShapeDomain || node.output_size() != 1 || node.input_size() == 0) continue;
    auto data = shapes.find(node.input(0));
    if (data == shapes.end()) continue;
    const int64_t rank = static_cast<int64_t>(data->second.size());
    onnx::TensorProto operand;
    operand.set_name(node.output(0) + "__every_axis");
    if (node.op_type() == "Pad") {
      const onnx::TensorProto *pads = constant(node, 1), *axes = constant(node, 3);
      if (!pads || !axes) continue;
      auto p = TensorInts(*pads);
      auto a = TensorInts(*axes);
      std::optional<std::vector<int64_t>> full;
      if (p.ok() && a.ok()) full = PadsForEveryAxis(*p, *a, rank);
      if (!full) continue;
      operand.set_data_type(onnx::TensorProto::INT64);
      operand.add_dims(2 * rank);
      for (int64_t v : *full) operand.add_int64_data(v);
      node.set_input(1, operand.name());
      node.mutable_input()->DeleteSubrange(3, node.input_size() - 3);
    } else if (node.op_type() == "Resize" && FindAttribute(node, "axes") != nullptr) {
      const std::vector<int64_t> axes = IntsAttribute(node, "axes");
      const onnx::TensorProto *scales = constant(node, 2), *sizes = constant(node, 3);
      absl::StatusOr<std::string> scale_bytes = absl::NotFoundError("no scales");
      if (scales != nullptr && scales->data_type() == onnx::TensorProto::FLOAT) scale_bytes = TensorBytes(*scales);
      if (scale_bytes.ok() && !scale_bytes->empty()) {
        std::vector<float> given(scale_bytes->size() / sizeof(float));
        std::memcpy(given.data(), scale_bytes->data(), given.size() * sizeof(float));
        auto full = ForEveryAxis<float>(given, axes, std::vector<float>(rank, 1.f));
        if (!full) continue;
        operand.set_data_type(onnx::TensorProto::FLOAT);
        operand.add_dims(rank);
        for (float v : *full) operand.add_float_data(v);
        node.set_input(2, operand.name());
      } else if (sizes != nullptr) {
        auto given = TensorInts(*sizes);
        if (!given.ok()) continue;
        auto full = ForEveryAxis<int64_t>(*given, axes, data->second);
        if (!full) continue;
        operand.set_data_type(onnx::TensorProto::INT64);
        operand.add_dims(rank);
        for (int64_t v : *full) operand.add_int64_data(v);
        node.set_input(3, operand.name());
      } else {
        continue;
      }
      EraseAttribute(node, "axes");
    } else {
      continue;
    }
    node.set_domain("");
    added.push_back(std::move(operand));
  }
  for (auto& t : added) *g->add_initializer() = std::move(t);
  return static_cast<int>(added.size());
}

}  // namespace taso::onnx_internal
