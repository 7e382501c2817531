// Lowering of the ONNX operators the IR models. Each lowering returns nullopt
// whenever the node does something the IR cannot express exactly (dilations,
// ceil_mode, training mode, non-float32 or unknown shapes): the node then
// stays opaque, which is always correct.
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "onnx_io/onnx_common.h"
#include "onnx_io/onnx_import_internal.h"
#include "core/op_registry.h"

namespace taso::onnx_internal {
namespace {

using Outputs = std::optional<std::vector<ImportedValue>>;

ImportedValue Bind(TensorRef ref) { return {ImportedValue::Kind::kTensor, ref, nullptr}; }

bool HasInput(const onnx::NodeProto& node, int i) { return i < node.input_size() && !node.input(i).empty(); }

bool AllOnes(const std::vector<int64_t>& values) {
  for (int64_t v : values) {
    if (v != 1) return false;
  }
  return true;
}

// Attribute `name` as exactly two values (height, width), or `fallback` when absent.
std::optional<std::vector<int64_t>> Pair(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  if (!FindAttribute(node, name)) return std::vector<int64_t>{fallback, fallback};
  std::vector<int64_t> v = IntsAttribute(node, name);
  if (v.size() != 2) return std::nullopt;
  return v;
}

// Reads strides, auto_pad and pads of a 2-D Conv or pool into `p`. Explicit
// padding that equals SAME or VALID becomes that, so rewrite rules match.
bool ReadWindow(const onnx::NodeProto& node, int64_t in_h, int64_t in_w, int64_t kh, int64_t kw, OpParams& p) {
  auto strides = Pair(node, "strides", 1);
  if (!strides || (*strides)[0] < 1 || (*strides)[1] < 1) return false;
  p.stride_h = static_cast<int>((*strides)[0]);
  p.stride_w = static_cast<int>((*strides)[1]);
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  std::vector<int64_t> pads(4, 0);  // {top, left, bottom, right}
  if (auto_pad == "VALID") {
    p.padding = Padding::kValid;
    return true;
  } else if (auto_pad == "SAME_UPPER") {
    p.padding = Padding::kSame;  // the IR's SAME: the smaller half before
    return true;
  } else if (auto_pad == "SAME_LOWER") {
    const int64_t in[2] = {in_h, in_w}, k[2] = {kh, kw}, s[2] = {p.stride_h, p.stride_w};
    for (int axis = 0; axis < 2; ++axis) {
      const int64_t out = (in[axis] + s[axis] - 1) / s[axis];
      const int64_t total = std::max<int64_t>((out - 1) * s[axis] + k[axis] - in[axis], 0);
      pads[axis] = total - total / 2;  // the larger half before
      pads[axis + 2] = total / 2;
    }
  } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
    if (FindAttribute(node, "pads")) pads = IntsAttribute(node, "pads");
    if (pads.size() != 4) return false;
  } else {
    return false;
  }
  for (int64_t v : pads) {
    if (v < 0) return false;
  }
  p.padding = Padding::kExplicit;
  p.pads.assign(pads.begin(), pads.end());
  NormalizePadding(p, in_h, in_w, kh, kw);
  return true;
}

}  // namespace

std::optional<TensorRef> Importer::FloatInput(const onnx::NodeProto& node, int i) {
  if (!HasInput(node, i)) return std::nullopt;
  auto it = values_.find(node.input(i));
  if (it == values_.end() || it->second.kind == ImportedValue::Kind::kSideConstant) return std::nullopt;
  auto ref = Materialize(node.input(i));
  if (!ref.ok()) return std::nullopt;
  const TensorType& t = TypeOf(*ref);
  if (t.dtype != DType::kFloat32) return std::nullopt;
  for (int64_t d : t.dims) {
    if (d < 0) return std::nullopt;  // unknown: only opaque nodes accept it
  }
  return *ref;
}

std::optional<std::vector<int64_t>> Importer::ConstantIntsInput(const onnx::NodeProto& node, int i) {
  if (!HasInput(node, i)) return std::nullopt;
  auto it = values_.find(node.input(i));
  if (it == values_.end() || it->second.kind == ImportedValue::Kind::kTensor) return std::nullopt;
  auto ints = TensorInts(*it->second.constant);
  if (!ints.ok()) return std::nullopt;
  return *std::move(ints);
}

std::optional<TensorRef> Importer::Reshape(TensorRef x, const std::vector<int64_t>& dims) {
  if (TypeOf(x).dims == dims) return x;
  OpParams p;
  p.shape = dims;
  auto r = AddOp1(OpKind::kReshape, p, {x});
  if (!r.ok()) return std::nullopt;
  return *r;
}

TensorRef Importer::ScalarWeight(const std::string& hint, float value) {
  std::string bytes(sizeof(float), '\0');
  std::memcpy(bytes.data(), &value, sizeof(float));
  return AddWeight(FreshName(hint), TensorType::RowMajor(DType::kFloat32, {}),
                   std::make_shared<const std::string>(std::move(bytes)));
}

Outputs Importer::Lower(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  if (op == "Conv") return LowerConv(node);
  if (op == "MaxPool" || op == "AveragePool") return LowerPool(node);
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return LowerGlobalPool(node);
  if (op == "MatMul") return LowerMatMul(node);
  if (op == "Gemm") return LowerGemm(node);
  if (op == "Add" || op == "Mul" || op == "Relu" || op == "Tanh" || op == "Sigmoid") return LowerElementwise(node);
  if (op == "Concat") return LowerConcat(node);
  if (op == "Split") return LowerSplit(node);
  if (op == "Transpose") return LowerTranspose(node);
  if (op == "Reshape") return LowerReshape(node);
  if (op == "Flatten") return LowerFlatten(node);
  if (op == "BatchNormalization") return LowerBatchNorm(node);
  if (op == "Identity" || op == "Dropout") return LowerPassThrough(node);
  return std::nullopt;
}

Outputs Importer::LowerConv(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0), w = FloatInput(node, 1);
  if (!x || !w || node.output_size() != 1) return std::nullopt;
  const TensorType xt = TypeOf(*x), wt = TypeOf(*w);
  if (xt.rank() != 4 || wt.rank() != 4) return std::nullopt;  // 1-D and 3-D convolutions stay opaque
  if (!AllOnes(IntsAttribute(node, "dilations"))) return std::nullopt;
  // The IR derives the group count from the channel counts; they must agree.
  if (wt.dims[1] * IntAttribute(node, "group", 1) != xt.dims[1]) return std::nullopt;
  if (FindAttribute(node, "kernel_shape") &&
      IntsAttribute(node, "kernel_shape") != std::vector<int64_t>{wt.dims[2], wt.dims[3]}) {
    return std::nullopt;
  }
  OpParams p;
  if (!ReadWindow(node, xt.dims[2], xt.dims[3], wt.dims[2], wt.dims[3], p)) return std::nullopt;
  auto y = AddOp1(OpKind::kConv2D, p, {*x, *w});
  if (!y.ok()) return std::nullopt;
  if (!HasInput(node, 2)) return std::vector<ImportedValue>{Bind(*y)};
  // Bias [M] broadcast over (N, M, H, W) once reshaped to [M, 1, 1].
  auto b = FloatInput(node, 2);
  if (!b || TypeOf(*b).dims != std::vector<int64_t>{wt.dims[0]}) return std::nullopt;
  auto b3 = Reshape(*b, {wt.dims[0], 1, 1});
  if (!b3) return std::nullopt;
  auto sum = AddOp1(OpKind::kEwAdd, {}, {*y, *b3});
  if (!sum.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*sum)};
}

Outputs Importer::LowerPool(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0);
  if (!x || TypeOf(*x).rank() != 4) return std::nullopt;
  if (node.output_size() > 1 && !node.output(1).empty()) return std::nullopt;  // MaxPool's indices
  if (IntAttribute(node, "ceil_mode", 0) != 0 || !AllOnes(IntsAttribute(node, "dilations"))) return std::nullopt;
  const std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape");
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1) return std::nullopt;
  const bool average = node.op_type() == "AveragePool";
  OpParams p;
  p.kernel_h = static_cast<int>(kernel[0]);
  p.kernel_w = static_cast<int>(kernel[1]);
  // Before opset 7 there is no count_include_pad: padding was never counted.
  if (average) p.count_include_pad = IntAttribute(node, "count_include_pad", 0) != 0;
  const TensorType& xt = TypeOf(*x);
  if (!ReadWindow(node, xt.dims[2], xt.dims[3], kernel[0], kernel[1], p)) return std::nullopt;
  auto y = AddOp1(average ? OpKind::kPoolAvg : OpKind::kPoolMax, p, {*x});
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerGlobalPool(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0);
  if (!x || TypeOf(*x).rank() != 4) return std::nullopt;
  OpParams p;
  p.kernel_h = static_cast<int>(TypeOf(*x).dims[2]);
  p.kernel_w = static_cast<int>(TypeOf(*x).dims[3]);
  p.padding = Padding::kValid;
  auto y = AddOp1(node.op_type() == "GlobalAveragePool" ? OpKind::kPoolAvg : OpKind::kPoolMax, p, {*x});
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerMatMul(const onnx::NodeProto& node) {
  auto a = FloatInput(node, 0), b = FloatInput(node, 1);
  if (!a || !b) return std::nullopt;
  const int ra = TypeOf(*a).rank(), rb = TypeOf(*b).rank();
  if (ra == 0 || rb == 0) return std::nullopt;
  // A 1-D operand is a row (left) or a column (right) whose extra dimension
  // is dropped from the result again, as numpy does.
  std::optional<TensorRef> a2 = ra == 1 ? Reshape(*a, {1, TypeOf(*a).dims[0]}) : a;
  std::optional<TensorRef> b2 = rb == 1 ? Reshape(*b, {TypeOf(*b).dims[0], 1}) : b;
  if (!a2 || !b2) return std::nullopt;
  auto y = AddOp1(OpKind::kMatMul, {}, {*a2, *b2});
  if (!y.ok()) return std::nullopt;
  std::vector<int64_t> dims = TypeOf(*y).dims;
  if (rb == 1) dims.erase(dims.end() - 1);
  if (ra == 1) dims.erase(dims.end() - (rb == 1 ? 1 : 2));
  auto out = Reshape(*y, dims);
  if (!out) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*out)};
}

Outputs Importer::LowerGemm(const onnx::NodeProto& node) {
  auto a = FloatInput(node, 0), b = FloatInput(node, 1);
  if (!a || !b || TypeOf(*a).rank() != 2 || TypeOf(*b).rank() != 2) return std::nullopt;
  const float alpha = FloatAttribute(node, "alpha", 1.f), beta = FloatAttribute(node, "beta", 1.f);
  OpParams swap;
  swap.perm = {1, 0};
  for (auto [operand, attr] : {std::pair{&a, "transA"}, std::pair{&b, "transB"}}) {
    if (IntAttribute(node, attr, 0) == 0) continue;
    auto t = AddOp1(OpKind::kTranspose, swap, {**operand});
    if (!t.ok()) return std::nullopt;
    *operand = *t;
  }
  auto y = AddOp1(OpKind::kMatMul, {}, {*a, *b});
  if (!y.ok()) return std::nullopt;
  const std::vector<int64_t> mn = TypeOf(*y).dims;
  const std::string& out_name = node.output(0);
  if (alpha != 1.f) {
    y = AddOp1(OpKind::kScalarMul, {}, {*y, ScalarWeight(out_name + "_alpha", alpha)});
    if (!y.ok()) return std::nullopt;
  }
  if (HasInput(node, 2)) {
    auto c = FloatInput(node, 2);
    if (!c) return std::nullopt;
    // Before opset 7, C broadcasts only with broadcast=1.
    if (opset_ < 7 && IntAttribute(node, "broadcast", 0) == 0 && TypeOf(*c).dims != mn) return std::nullopt;
    absl::StatusOr<TensorRef> scaled = *c;
    if (beta != 1.f) scaled = AddOp1(OpKind::kScalarMul, {}, {*c, ScalarWeight(out_name + "_beta", beta)});
    if (!scaled.ok()) return std::nullopt;
    y = AddOp1(OpKind::kEwAdd, {}, {*y, *scaled});
    if (!y.ok() || TypeOf(*y).dims != mn) return std::nullopt;  // C may only broadcast up to [M, N]
  }
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerElementwise(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  if (op == "Relu" || op == "Tanh" || op == "Sigmoid") {
    auto x = FloatInput(node, 0);
    if (!x) return std::nullopt;
    const OpKind kind = op == "Relu" ? OpKind::kRelu : op == "Tanh" ? OpKind::kTanh : OpKind::kSigmoid;
    auto y = AddOp1(kind, {}, {*x});
    if (!y.ok()) return std::nullopt;
    return std::vector<ImportedValue>{Bind(*y)};
  }
  auto a = FloatInput(node, 0), b = FloatInput(node, 1);
  if (!a || !b) return std::nullopt;
  if (opset_ < 7) {
    // Legacy broadcasting: B's dimensions line up with A's from `axis`
    // (default: the trailing ones); spell that out for numpy broadcasting.
    const std::vector<int64_t> ad = TypeOf(*a).dims, bd = TypeOf(*b).dims;
    if (IntAttribute(node, "broadcast", 0) == 0) {
      if (ad != bd) return std::nullopt;
    } else {
      const int64_t ra = ad.size(), rb = bd.size();
      const int64_t axis = IntAttribute(node, "axis", ra - rb);
      if (axis < 0 || axis + rb > ra) return std::nullopt;
      std::vector<int64_t> aligned(ra, 1);
      std::copy(bd.begin(), bd.end(), aligned.begin() + axis);
      b = Reshape(*b, aligned);
      if (!b) return std::nullopt;
    }
  }
  auto y = AddOp1(op == "Add" ? OpKind::kEwAdd : OpKind::kEwMul, {}, {*a, *b});
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerConcat(const onnx::NodeProto& node) {
  std::vector<TensorRef> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    auto x = FloatInput(node, i);
    if (!x) return std::nullopt;
    inputs.push_back(*x);
  }
  if (inputs.empty()) return std::nullopt;
  const int rank = TypeOf(inputs[0]).rank();
  int64_t axis = IntAttribute(node, "axis", 1);  // opset 1 defaults to 1
  if (axis < 0) axis += rank;
  OpParams p;
  p.axis = static_cast<int>(axis);
  auto y = AddOp1(OpKind::kConcat, p, inputs);
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerSplit(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0);
  if (!x) return std::nullopt;
  const TensorType& xt = TypeOf(*x);
  int64_t axis = IntAttribute(node, "axis", 0);
  if (axis < 0) axis += xt.rank();
  if (axis < 0 || axis >= xt.rank()) return std::nullopt;
  // Sizes: the `split` attribute (before opset 13), the constant second input
  // (opset 1 and 13+), or equal parts.
  std::vector<int64_t> sizes = IntsAttribute(node, "split");
  if (sizes.empty() && HasInput(node, 1)) {
    auto given = ConstantIntsInput(node, 1);
    if (!given) return std::nullopt;
    sizes = *given;
  }
  const int64_t parts = node.output_size();
  if (sizes.empty()) {
    if (parts < 1 || xt.dims[axis] % parts != 0) return std::nullopt;
    sizes.assign(parts, xt.dims[axis] / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts) return std::nullopt;
  OpParams p;
  p.axis = static_cast<int>(axis);
  p.sizes = sizes;
  auto outs = AddOp(OpKind::kSplit, p, {*x});
  if (!outs.ok()) return std::nullopt;
  std::vector<ImportedValue> result;
  for (const TensorRef& r : *outs) result.push_back(Bind(r));
  return result;
}

Outputs Importer::LowerTranspose(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0);
  if (!x) return std::nullopt;
  OpParams p;
  const std::vector<int64_t> perm = IntsAttribute(node, "perm");
  if (perm.empty()) {
    for (int i = TypeOf(*x).rank() - 1; i >= 0; --i) p.perm.push_back(i);  // default: reverse
  } else {
    p.perm.assign(perm.begin(), perm.end());
  }
  auto y = AddOp1(OpKind::kTranspose, p, {*x});
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerReshape(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0);
  if (!x) return std::nullopt;
  std::optional<std::vector<int64_t>> shape;
  if (opset_ < 5) {
    if (FindAttribute(node, "shape")) shape = IntsAttribute(node, "shape");
  } else {
    shape = ConstantIntsInput(node, 1);  // a computed shape keeps the node opaque
  }
  if (!shape) return std::nullopt;
  const std::vector<int64_t>& in = TypeOf(*x).dims;
  const bool allow_zero = IntAttribute(node, "allowzero", 0) != 0;
  std::vector<int64_t> dims;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape->size(); ++i) {
    int64_t d = (*shape)[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) return std::nullopt;
      d = in[i];  // 0 copies the input's dimension
    } else if (d == -1) {
      if (inferred >= 0) return std::nullopt;
      inferred = static_cast<int>(i);
      d = 1;
    } else if (d < 0) {
      return std::nullopt;
    }
    dims.push_back(d);
    known *= d;
  }
  const int64_t total = TypeOf(*x).num_elements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    dims[inferred] = total / known;
  }
  OpParams p;
  p.shape = dims;
  auto y = AddOp1(OpKind::kReshape, p, {*x});
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerFlatten(const onnx::NodeProto& node) {
  auto x = FloatInput(node, 0);
  if (!x) return std::nullopt;
  const std::vector<int64_t>& in = TypeOf(*x).dims;
  int64_t axis = IntAttribute(node, "axis", 1);
  if (axis < 0) axis += in.size();
  if (axis < 0 || axis > static_cast<int64_t>(in.size())) return std::nullopt;
  const int64_t outer = std::accumulate(in.begin(), in.begin() + axis, int64_t{1}, std::multiplies<int64_t>());
  const int64_t inner = std::accumulate(in.begin() + axis, in.end(), int64_t{1}, std::multiplies<int64_t>());
  OpParams p;
  p.shape = {outer, inner};
  auto y = AddOp1(OpKind::kReshape, p, {*x});
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerBatchNorm(const onnx::NodeProto& node) {
  // Only the inference form: one output (running statistics not updated).
  for (int i = 1; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) return std::nullopt;
  }
  if (opset_ < 7 && IntAttribute(node, "is_test", 0) == 0) return std::nullopt;
  if (opset_ < 9 && IntAttribute(node, "spatial", 1) != 1) return std::nullopt;
  if (IntAttribute(node, "training_mode", 0) != 0) return std::nullopt;
  std::vector<TensorRef> inputs;
  for (int i = 0; i < 5; ++i) {
    auto t = FloatInput(node, i);
    if (!t) return std::nullopt;
    inputs.push_back(*t);
  }
  OpParams p;
  p.epsilon = FloatAttribute(node, "epsilon", 1e-5f);
  // Folding into the preceding conv is the optimizer's job (and reported there).
  auto y = AddOp1(OpKind::kBatchNorm, p, inputs);
  if (!y.ok()) return std::nullopt;
  return std::vector<ImportedValue>{Bind(*y)};
}

Outputs Importer::LowerPassThrough(const onnx::NodeProto& node) {
  if (!HasInput(node, 0)) return std::nullopt;
  auto it = values_.find(node.input(0));
  // A side constant is referenced by its own name, so an alias would dangle.
  if (it == values_.end() || it->second.kind == ImportedValue::Kind::kSideConstant) return std::nullopt;
  if (node.op_type() == "Dropout") {
    // The mask output has no inference meaning worth keeping unless read.
    if (node.output_size() > 1 && !node.output(1).empty() && consumed_.count(node.output(1))) return std::nullopt;
    if (HasInput(node, 2)) {  // training_mode (opset 12+) must be a constant false
      auto mode = values_.find(node.input(2));
      if (mode == values_.end() || mode->second.kind != ImportedValue::Kind::kConstant) return std::nullopt;
      auto bytes = TensorBytes(*mode->second.constant);
      if (!bytes.ok() || bytes->empty() || (*bytes)[0] != 0) return std::nullopt;
    }
  }
  return std::vector<ImportedValue>{it->second};
}

}  // namespace taso::onnx_internal
