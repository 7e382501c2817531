#include "profiler/ort/opaque_operands.h"

#include <cstring>
#include <optional>
#include <vector>

#include "onnx/onnx_pb.h"

namespace taso::profiler {
namespace {

// The signature's operands by the ONNX node's input positions (slots).
class Operands {
 public:
  explicit Operands(const CanonicalSignature& s) : s_(s) {
    const std::vector<int>& slots = s.op.params.opaque.input_slots;
    if (slots.empty()) {
      for (size_t k = 0; k < s.op.inputs.size(); ++k) ir_.push_back(static_cast<int>(k));
    } else {
      ir_ = slots;
    }
  }

  // The IR input at ONNX position `p`, or -1 (omitted or past the end).
  int At(int p) const { return p >= 0 && p < static_cast<int>(ir_.size()) && ir_[p] >= 0 ? ir_[p] : -1; }
  const TensorType* Type(int p) const { return At(p) < 0 ? nullptr : &s_.op.inputs[At(p)]; }

  // The integer values the signature carries for position `p`, if any.
  std::optional<std::vector<int64_t>> Ints(int p) const {
    if (At(p) < 0) return std::nullopt;
    auto c = s_.op.constant_inputs.find(At(p));
    const TensorType& t = *Type(p);
    if (c == s_.op.constant_inputs.end() || c->second.empty()) return std::nullopt;
    std::vector<int64_t> v(t.num_elements());
    for (size_t i = 0; i < v.size(); ++i) {
      if (t.dtype == DType::kInt64) {
        std::memcpy(&v[i], c->second.data() + i * 8, 8);
      } else if (t.dtype == DType::kInt32) {
        int32_t x;
        std::memcpy(&x, c->second.data() + i * 4, 4);
        v[i] = x;
      } else {
        return std::nullopt;
      }
    }
    return v;
  }

  // Whether position `p` is an operand with no value: one to derive.
  bool Open(int p) const {
    if (At(p) < 0) return false;
    auto c = s_.op.constant_inputs.find(At(p));
    return c == s_.op.constant_inputs.end() || (c->second.empty() && !CarriesValue(*Type(p)));
  }

  // Stores `values` for position `p` if it is an open 1-D integer operand of
  // as many elements.
  void SetInts(int p, const std::vector<int64_t>& values, std::map<int, std::string>& out) const {
    const TensorType* t = Type(p);
    if (!Open(p) || t->rank() != 1 || t->dims[0] != static_cast<int64_t>(values.size())) return;
    std::string bytes;
    for (int64_t v : values) {
      if (t->dtype == DType::kInt64) {
        bytes.append(reinterpret_cast<const char*>(&v), 8);
      } else if (t->dtype == DType::kInt32) {
        const int32_t x = static_cast<int32_t>(v);
        bytes.append(reinterpret_cast<const char*>(&x), 4);
      } else {
        return;
      }
    }
    out[At(p)] = std::move(bytes);
  }

  void SetFloats(int p, const std::vector<float>& values, std::map<int, std::string>& out) const {
    const TensorType* t = Type(p);
    if (!Open(p) || t->dtype != DType::kFloat32 || t->rank() != 1 || t->dims[0] != static_cast<int64_t>(values.size())) {
      return;
    }
    out[At(p)] = std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }

 private:
  const CanonicalSignature& s_;
  std::vector<int> ir_;
};

// An INTS attribute of the operator (Resize's axes, opset 18), if it has one.
std::optional<std::vector<int64_t>> IntsAttribute(const OpaqueInfo& info, const std::string& name) {
  for (const auto& [attribute, serialized] : info.attributes) {
    onnx::AttributeProto a;
    if (attribute != name || !a.ParseFromString(serialized)) continue;
    return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  }
  return std::nullopt;
}

bool Known(const TensorType& t) {
  for (int64_t d : t.dims) {
    if (d < 0) return false;
  }
  return true;
}

// Slice's starts, ends and steps (positions 1, 2, 4) over its axes (3).
void DeriveSlice(const Operands& o, const TensorType& x, const TensorType& y, std::map<int, std::string>& out) {
  const TensorType* starts_type = o.Type(1);
  if (starts_type == nullptr || starts_type->rank() != 1) return;
  const int64_t n = starts_type->dims[0];
  std::vector<int64_t> axes(n);
  if (auto given = o.Ints(3)) {
    axes = *given;
  } else if (o.At(3) >= 0) {
    return;  // axes computed at run time: which ones is unknown
  } else {
    for (int64_t i = 0; i < n; ++i) axes[i] = i;
  }
  std::vector<int64_t> steps = o.Ints(4).value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> starts = o.Ints(1).value_or(std::vector<int64_t>(n, 0));
  if (static_cast<int64_t>(axes.size()) != n || static_cast<int64_t>(steps.size()) != n ||
      static_cast<int64_t>(starts.size()) != n) {
    return;
  }
  std::vector<int64_t> ends(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + x.rank() : axes[i];
    if (axis < 0 || axis >= x.rank() || steps[i] <= 0) return;
    const int64_t start = starts[i] < 0 ? starts[i] + x.dims[axis] : starts[i];
    ends[i] = start + y.dims[axis] * steps[i];
  }
  o.SetInts(1, starts, out);
  o.SetInts(2, ends, out);
  o.SetInts(4, steps, out);
}

}  // namespace

std::map<int, std::string> DerivedOperands(const CanonicalSignature& s) {
  std::map<int, std::string> out;
  const OpaqueInfo& info = s.op.params.opaque;
  if ((!info.domain.empty() && info.domain != "ai.onnx") || s.outputs.empty() || !Known(s.outputs[0])) return out;
  const Operands o(s);
  const TensorType& y = s.outputs[0];
  const std::string& op = info.op_type;
  if (op == "Expand" || op == "Reshape") {
    o.SetInts(1, y.dims, out);
    return out;
  }
  if (op == "ConstantOfShape") {
    o.SetInts(0, y.dims, out);
    return out;
  }
  const TensorType* x = o.Type(0);
  if (x == nullptr || !Known(*x) || x->rank() != y.rank()) return out;
  std::vector<int64_t> after(x->rank()), ratio(x->rank());
  std::vector<float> scales(x->rank());
  bool divides = true;
  for (int i = 0; i < x->rank(); ++i) {
    after[i] = y.dims[i] - x->dims[i];
    divides = divides && x->dims[i] > 0 && y.dims[i] % x->dims[i] == 0;
    ratio[i] = x->dims[i] > 0 ? y.dims[i] / x->dims[i] : 0;
    scales[i] = x->dims[i] > 0 ? static_cast<float>(y.dims[i]) / static_cast<float>(x->dims[i]) : 0;
  }
  if (op == "Tile" && divides) {
    o.SetInts(1, ratio, out);
  } else if (op == "Pad") {
    std::vector<int64_t> pads(x->rank(), 0);
    pads.insert(pads.end(), after.begin(), after.end());
    o.SetInts(1, pads, out);
  } else if (op == "Slice") {
    DeriveSlice(o, *x, y, out);
  } else if (op == "Resize") {
    // Scales, or sizes: the one the node gives (the other is omitted), for
    // every axis or the `axes` listed.
    std::vector<float> some_scales = scales;
    std::vector<int64_t> some_sizes = y.dims;
    if (auto axes = IntsAttribute(info, "axes")) {
      some_scales.clear();
      some_sizes.clear();
      for (int64_t a : *axes) {
        if (a < 0) a += x->rank();
        if (a < 0 || a >= x->rank()) return out;
        some_scales.push_back(scales[a]);
        some_sizes.push_back(y.dims[a]);
      }
    }
    o.SetFloats(2, some_scales, out);
    o.SetInts(3, some_sizes, out);
  }
  return out;
}

}  // namespace taso::profiler
