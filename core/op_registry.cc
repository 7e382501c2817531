#include "core/op_registry.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/decomposition.h"

namespace taso {
namespace {

constexpr OpInfo kOpInfos[] = {
    {OpKind::kInput, "input", 0, 0, true},
    {OpKind::kWeight, "weight", 0, 0, true},
    {OpKind::kEwAdd, "ewadd", 2, 2, false},
    {OpKind::kEwMul, "ewmul", 2, 2, false},
    {OpKind::kScalarMul, "smul", 2, 2, false},
    {OpKind::kTranspose, "transpose", 1, 1, false},
    {OpKind::kMatMul, "matmul", 2, 2, false},
    {OpKind::kConv2D, "conv2d", 2, 3, false},  // optional per-channel bias
    {OpKind::kEnlarge, "enlarge", 1, 1, false},
    {OpKind::kRelu, "relu", 1, 1, false},
    {OpKind::kTanh, "tanh", 1, 1, false},
    {OpKind::kSigmoid, "sigmoid", 1, 1, false},
    {OpKind::kPoolAvg, "poolavg", 1, 1, false},
    {OpKind::kPoolMax, "poolmax", 1, 1, false},
    {OpKind::kConcat, "concat", 1, -1, false},
    {OpKind::kSplit, "split", 1, 1, false},
    {OpKind::kReshape, "reshape", 1, 1, false},
    {OpKind::kMergeGConv, "merge_gconv", 1, 1, false},
    {OpKind::kConstPool, "const_pool", 0, 0, true},
    {OpKind::kConstIConv, "const_iconv", 0, 0, true},
    {OpKind::kConstIMatMul, "const_imatmul", 0, 0, true},
    {OpKind::kConstOnes, "const_ones", 0, 0, true},
    {OpKind::kBatchNorm, "batchnorm", 5, 5, false},
    {OpKind::kFusedGemm, "fused_gemm", 3, 3, false},
    {OpKind::kOpaque, "opaque", 0, -1, false},  // last: GetOpInfo's fallback
};


SplitTree SplitAt(const TensorType& t, int dim) {
  return dim < static_cast<int>(t.split.size()) ? t.split[dim] : nullptr;
}

// Numpy-style broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<std::vector<TensorType>> Elementwise(OpKind kind, const std::vector<TensorType>& in) {
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  if (a.dtype != b.dtype) return InvalidOperands(kind, "element types differ", in);
  auto dims = Broadcast(a.dims, b.dims);
  if (!dims) return InvalidOperands(kind, "shapes do not broadcast", in);
  TensorType out = TensorType::RowMajor(a.dtype, *dims);
  if (a.dims == b.dims) {
    if (a.strides == b.strides) out.strides = a.strides;
    for (int i = 0; i < a.rank(); ++i) {
      if (SplitTreeEqual(SplitAt(a, i), SplitAt(b, i))) out.split[i] = SplitAt(a, i);
    }
  }
  return std::vector<TensorType>{out};
}

absl::StatusOr<std::vector<TensorType>> MatMul(const std::vector<TensorType>& in) {
  const TensorType& x = in[0];
  const TensorType& y = in[1];
  if (x.rank() < 2 || y.rank() < 2) return InvalidOperands(OpKind::kMatMul, "operands need rank >= 2", in);
  if (x.dtype != y.dtype) return InvalidOperands(OpKind::kMatMul, "element types differ", in);
  const int64_t k = x.dims[x.rank() - 1];
  if (k != y.dims[y.rank() - 2]) {
    return InvalidOperands(OpKind::kMatMul,
                   absl::StrCat("inner dimensions differ (", k, " vs ", y.dims[y.rank() - 2], ")"), in);
  }
  std::vector<int64_t> xb(x.dims.begin(), x.dims.end() - 2), yb(y.dims.begin(), y.dims.end() - 2);
  auto batch = Broadcast(xb, yb);
  if (!batch) return InvalidOperands(OpKind::kMatMul, "batch dimensions do not broadcast", in);
  std::vector<int64_t> dims = *batch;
  dims.push_back(x.dims[x.rank() - 2]);
  dims.push_back(y.dims[y.rank() - 1]);
  TensorType out = TensorType::RowMajor(x.dtype, dims);
  const int r = out.rank();
  out.split[r - 2] = SplitAt(x, x.rank() - 2);
  out.split[r - 1] = SplitAt(y, y.rank() - 1);
  if (xb == yb) {
    for (size_t i = 0; i < xb.size(); ++i) {
      if (SplitTreeEqual(SplitAt(x, i), SplitAt(y, i))) out.split[i] = SplitAt(x, i);
    }
  }
  return std::vector<TensorType>{out};
}

absl::StatusOr<std::vector<TensorType>> Conv2D(const OpParams& p, const std::vector<TensorType>& in) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  const OpKind kind = OpKind::kConv2D;
  if (x.rank() != 4) return InvalidOperands(kind, "input must be 4-D (N,C,H,W)", in);
  if (w.rank() != 4) return InvalidOperands(kind, "weight must be 4-D (Cout,Cin/groups,KH,KW)", in);
  if (x.dtype != w.dtype) return InvalidOperands(kind, "element types differ", in);
  const int64_t c = x.dims[1], cout = w.dims[0], cg = w.dims[1];
  if (cg <= 0 || c % cg != 0) {
    return InvalidOperands(kind, absl::StrCat("input has ", c, " channels, not a multiple of the weight's ", cg,
                                      " input channels per group"), in);
  }
  const int64_t groups = c / cg;
  if (cout % groups != 0) {
    return InvalidOperands(kind, absl::StrCat(cout, " output channels do not divide into ", groups, " groups"), in);
  }
  if (p.stride_h < 1 || p.stride_w < 1) return InvalidOperands(kind, "strides must be >= 1", in);
  auto h = ComputeWindow(p, 0, x.dims[2], w.dims[2]);
  if (!h.ok()) return InvalidOperands(kind, std::string(h.status().message()), in);
  auto wd = ComputeWindow(p, 1, x.dims[3], w.dims[3]);
  if (!wd.ok()) return InvalidOperands(kind, std::string(wd.status().message()), in);
  if (in.size() == 3) {
    const TensorType& b = in[2];
    if (b.dtype != x.dtype) return InvalidOperands(kind, "bias element type differs from the input's", in);
    if (b.dims != std::vector<int64_t>{cout}) {
      return InvalidOperands(kind, absl::StrCat("bias must be 1-D with one value per output channel (", cout, ")"), in);
    }
  }
  TensorType out = TensorType::RowMajor(x.dtype, {x.dims[0], cout, h->out, wd->out});
  out.split[0] = SplitAt(x, 0);
  out.split[1] = SplitAt(w, 0);
  return std::vector<TensorType>{out};
}

absl::StatusOr<std::vector<TensorType>> Pool(OpKind kind, const OpParams& p,
                                             const std::vector<TensorType>& in) {
  const TensorType& x = in[0];
  if (x.rank() != 4) return InvalidOperands(kind, "input must be 4-D (N,C,H,W)", in);
  if (p.kernel_h < 1 || p.kernel_w < 1) return InvalidOperands(kind, "kernel sizes must be >= 1", in);
  if (p.stride_h < 1 || p.stride_w < 1) return InvalidOperands(kind, "strides must be >= 1", in);
  auto h = ComputeWindow(p, 0, x.dims[2], p.kernel_h);
  if (!h.ok()) return InvalidOperands(kind, std::string(h.status().message()), in);
  auto w = ComputeWindow(p, 1, x.dims[3], p.kernel_w);
  if (!w.ok()) return InvalidOperands(kind, std::string(w.status().message()), in);
  TensorType out = TensorType::RowMajor(x.dtype, {x.dims[0], x.dims[1], h->out, w->out});
  out.split[0] = SplitAt(x, 0);
  out.split[1] = SplitAt(x, 1);
  return std::vector<TensorType>{out};
}

absl::StatusOr<std::vector<TensorType>> Transpose(const OpParams& p, const std::vector<TensorType>& in) {
  const TensorType& x = in[0];
  std::vector<int> perm = p.perm;
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> iota(x.rank());
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) {
    return InvalidOperands(OpKind::kTranspose,
                   absl::StrCat("perm [", absl::StrJoin(perm, ","), "] is not a permutation of rank ",
                                x.rank()), in);
  }
  TensorType out;
  out.dtype = x.dtype;
  for (int i = 0; i < x.rank(); ++i) {
    out.dims.push_back(x.dims[perm[i]]);
    out.strides.push_back(x.strides[perm[i]]);
    out.split.push_back(SplitAt(x, perm[i]));
  }
  if (p.shuffle) out.strides = RowMajorStrides(out.dims);
  return std::vector<TensorType>{out};
}

absl::StatusOr<std::vector<TensorType>> Concat(const OpParams& p, const std::vector<TensorType>& in) {
  const OpKind kind = OpKind::kConcat;
  const TensorType& first = in[0];
  if (p.axis < 0 || p.axis >= first.rank()) {
    return InvalidOperands(kind, absl::StrCat("axis ", p.axis, " out of range for rank ", first.rank()), in);
  }
  std::vector<int64_t> dims = first.dims;
  SplitTree axis_tree = SplitAt(first, p.axis);
  for (size_t i = 1; i < in.size(); ++i) {
    const TensorType& t = in[i];
    if (t.dtype != first.dtype) return InvalidOperands(kind, "element types differ", in);
    if (t.rank() != first.rank()) return InvalidOperands(kind, "ranks differ", in);
    for (int d = 0; d < first.rank(); ++d) {
      if (d != p.axis && t.dims[d] != first.dims[d]) {
        return InvalidOperands(kind, absl::StrCat("dimension ", d, " differs off the concat axis ", p.axis), in);
      }
    }
    // Left-nested: concat(a,b,c) records ((a,b),c), as concat(concat(a,b),c).
    axis_tree = MakeSplit(dims[p.axis], axis_tree, SplitAt(t, p.axis));
    dims[p.axis] += t.dims[p.axis];
  }
  TensorType out = TensorType::RowMajor(first.dtype, dims);
  for (int d = 0; d < first.rank(); ++d) {
    if (d == p.axis) {
      out.split[d] = in.size() > 1 ? axis_tree : SplitAt(first, d);
      continue;
    }
    bool agree = true;
    for (const TensorType& t : in) agree = agree && SplitTreeEqual(SplitAt(t, d), SplitAt(first, d));
    if (agree) out.split[d] = SplitAt(first, d);
  }
  return std::vector<TensorType>{out};
}

absl::StatusOr<std::vector<TensorType>> Split(const OpParams& p, const std::vector<TensorType>& in) {
  const OpKind kind = OpKind::kSplit;
  const TensorType& x = in[0];
  if (p.axis < 0 || p.axis >= x.rank()) {
    return InvalidOperands(kind, absl::StrCat("axis ", p.axis, " out of range for rank ", x.rank()), in);
  }
  TensorType base = TensorType::RowMajor(x.dtype, x.dims);
  base.split = x.split;
  base.split.resize(x.rank());
  std::vector<TensorType> outs;
  if (p.sizes.empty()) {
    const SplitTree tree = SplitAt(x, p.axis);
    if (!tree) {
      return InvalidOperands(kind, absl::StrCat("axis ", p.axis,
                                        " has no recorded concat point to split at (split undoes a concat)"),
                     in);
    }
    TensorType left = base, right = base;
    left.dims[p.axis] = tree->left_size;
    left.split[p.axis] = tree->left;
    right.dims[p.axis] = x.dims[p.axis] - tree->left_size;
    right.split[p.axis] = tree->right;
    left.strides = RowMajorStrides(left.dims);
    right.strides = RowMajorStrides(right.dims);
    return std::vector<TensorType>{left, right};
  }
  int64_t total = 0;
  for (int64_t s : p.sizes) {
    if (s < 1) return InvalidOperands(kind, "split sizes must be >= 1", in);
    total += s;
  }
  if (total != x.dims[p.axis]) {
    return InvalidOperands(kind, absl::StrCat("split sizes sum to ", total, " but axis ", p.axis, " has ",
                                      x.dims[p.axis]), in);
  }
  for (int64_t s : p.sizes) {
    TensorType part = base;
    part.dims[p.axis] = s;
    part.split[p.axis] = nullptr;
    part.strides = RowMajorStrides(part.dims);
    outs.push_back(part);
  }
  return outs;
}

absl::StatusOr<std::vector<TensorType>> Constant(OpKind kind, const OpParams& p) {
  const std::vector<TensorType> none;
  for (int64_t d : p.shape) {
    if (d < 1) return InvalidOperands(kind, absl::StrCat("shape ", DimsToString(p.shape), " has a dimension < 1"), none);
  }
  switch (kind) {
    case OpKind::kConstPool:
      if (p.shape.size() != 4 || p.shape[1] != 1) {
        return InvalidOperands(kind, absl::StrCat("shape must be (C,1,KH,KW), got ", DimsToString(p.shape)), none);
      }
      break;
    case OpKind::kConstIConv:
      if (p.shape.size() != 4 || (p.shape[1] != 1 && p.shape[0] != p.shape[1]) || p.shape[2] % 2 == 0 ||
          p.shape[3] % 2 == 0) {
        return InvalidOperands(kind, absl::StrCat("shape must be (C,C,KH,KW) or (C,1,KH,KW) with odd kernel, got ",
                                          DimsToString(p.shape)), none);
      }
      break;
    case OpKind::kConstIMatMul:
      if (p.shape.size() != 2 || p.shape[0] != p.shape[1]) {
        return InvalidOperands(kind, absl::StrCat("shape must be square (N,N), got ", DimsToString(p.shape)), none);
      }
      break;
    default:
      break;
  }
  return std::vector<TensorType>{TensorType::RowMajor(DType::kFloat32, p.shape)};
}

// Slots (OpaqueInfo) name every IR operand of the node once; `operands` of
// them at most (inputs: outer-scope values follow the node's own).
bool ValidSlots(const std::vector<int>& slots, int operands, bool all) {
  if (slots.empty()) return true;
  std::vector<bool> seen(operands, false);
  int named = 0;
  for (int s : slots) {
    if (s == OpaqueInfo::kOmitted || s == OpaqueInfo::kSideConstant) continue;
    if (s < 0 || s >= operands || seen[s]) return false;
    seen[s] = true;
    ++named;
  }
  // The node's own inputs come first, so they are 0..named-1.
  for (int i = 0; i < named; ++i) {
    if (!seen[i]) return false;
  }
  return !all || named == operands;
}

}  // namespace

absl::Status InvalidOperands(OpKind kind, const std::string& what, const std::vector<TensorType>& inputs) {
  std::vector<std::string> shapes;
  for (const TensorType& t : inputs) shapes.push_back(t.ToString());
  return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), ": ", what, " (inputs: ",
                                                 absl::StrJoin(shapes, ", "), ")"));
}

const OpInfo& GetOpInfo(OpKind kind) {
  for (const OpInfo& info : kOpInfos) {
    if (info.kind == kind) return info;
  }
  return kOpInfos[sizeof(kOpInfos) / sizeof(kOpInfos[0]) - 1];
}

absl::StatusOr<WindowGeometry> ComputeWindow(int64_t in, int64_t kernel, int64_t stride, Padding padding) {
  if (kernel < 1 || stride < 1) return absl::InvalidArgumentError("kernel and stride must be >= 1");
  WindowGeometry g;
  if (padding == Padding::kExplicit) {
    return absl::InvalidArgumentError("explicit padding needs its pads: use ComputeWindow(params, axis, ...)");
  }
  if (padding == Padding::kSame) {
    g.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((g.out - 1) * stride + kernel - in, 0);
    g.pad_before = total / 2;
    g.pad_after = total - g.pad_before;
  } else {
    if (in < kernel) {
      return absl::InvalidArgumentError(
          absl::StrCat("VALID window of ", kernel, " does not fit in extent ", in));
    }
    g.out = (in - kernel) / stride + 1;
  }
  return g;
}

absl::StatusOr<WindowGeometry> ComputeWindow(const OpParams& p, int axis, int64_t in, int64_t kernel) {
  const int64_t stride = axis == 0 ? p.stride_h : p.stride_w;
  if (p.padding != Padding::kExplicit) return ComputeWindow(in, kernel, stride, p.padding);
  if (p.pads.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("explicit padding needs 4 pads {top, left, bottom, right}, got ", p.pads.size()));
  }
  const int64_t before = p.pads[axis], after = p.pads[axis + 2];
  if (before < 0 || after < 0) return absl::InvalidArgumentError("pads must be >= 0");
  if (kernel < 1 || stride < 1) return absl::InvalidArgumentError("kernel and stride must be >= 1");
  if (before >= kernel || after >= kernel) {
    // A window entirely inside the padding would read no input at all.
    return absl::InvalidArgumentError(absl::StrCat("pads ", before, "/", after, " must be smaller than the kernel ", kernel));
  }
  const int64_t padded = in + before + after;
  if (padded < kernel) {
    return absl::InvalidArgumentError(
        absl::StrCat("window of ", kernel, " does not fit in extent ", in, " padded by ", before, "+", after));
  }
  WindowGeometry g;
  g.out = (padded - kernel) / stride + 1;
  g.pad_before = before;
  g.pad_after = std::max<int64_t>((g.out - 1) * stride + kernel - in - before, 0);
  return g;
}

bool NormalizePadding(OpParams& p, int64_t in_h, int64_t in_w, int64_t kernel_h, int64_t kernel_w) {
  if (p.padding != Padding::kExplicit) return false;
  auto eh = ComputeWindow(p, 0, in_h, kernel_h);
  auto ew = ComputeWindow(p, 1, in_w, kernel_w);
  if (!eh.ok() || !ew.ok()) return false;
  for (Padding candidate : {Padding::kValid, Padding::kSame}) {
    auto ch = ComputeWindow(in_h, kernel_h, p.stride_h, candidate);
    auto cw = ComputeWindow(in_w, kernel_w, p.stride_w, candidate);
    if (!ch.ok() || !cw.ok()) continue;
    // Same output extent and same first window position: the same windows.
    if (ch->out == eh->out && ch->pad_before == eh->pad_before && cw->out == ew->out &&
        cw->pad_before == ew->pad_before) {
      p.padding = candidate;
      p.pads.clear();
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<TensorType>> InferOutputTypes(OpKind kind, const OpParams& p,
                                                         const std::vector<TensorType>& in) {
  const OpInfo& info = GetOpInfo(kind);
  const int n = static_cast<int>(in.size());
  if (n < info.min_inputs || (info.max_inputs >= 0 && n > info.max_inputs)) {
    const std::string range = info.max_inputs == info.min_inputs ? ""
                              : info.max_inputs < 0              ? " or more"
                                                                 : absl::StrCat(" to ", info.max_inputs);
    return InvalidOperands(kind, absl::StrCat("takes ", info.min_inputs, range, " inputs, got ", n), in);
  }
  for (const TensorType& t : in) {
    if (t.strides.size() != t.dims.size()) return InvalidOperands(kind, "an input has malformed strides", in);
    for (int64_t d : t.dims) {
      // Opaque operators may carry dimensions ONNX could not infer (-1).
      if (d < 0 && kind != OpKind::kOpaque) return InvalidOperands(kind, "an input has a negative (unknown) dimension", in);
    }
  }
  switch (kind) {
    case OpKind::kInput:
    case OpKind::kWeight:
      return InvalidOperands(kind, "graph inputs and weights carry their own type", in);
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
      return Elementwise(kind, in);
    case OpKind::kScalarMul:
      if (in[1].rank() != 0) return InvalidOperands(kind, "the second operand must be a 0-D scalar", in);
      if (in[0].dtype != in[1].dtype) return InvalidOperands(kind, "element types differ", in);
      return std::vector<TensorType>{in[0]};
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
      return std::vector<TensorType>{in[0]};
    case OpKind::kTranspose:
      return Transpose(p, in);
    case OpKind::kMatMul:
      return MatMul(in);
    case OpKind::kConv2D:
      return Conv2D(p, in);
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
      return Pool(kind, p, in);
    case OpKind::kConcat:
      return Concat(p, in);
    case OpKind::kSplit:
      return Split(p, in);
    case OpKind::kEnlarge: {
      const TensorType& w = in[0];
      if (w.rank() != 4) return InvalidOperands(kind, "weight must be 4-D (Cout,Cin/groups,KH,KW)", in);
      if (p.kernel_h < w.dims[2] || p.kernel_w < w.dims[3]) {
        return InvalidOperands(kind, absl::StrCat("target kernel ", p.kernel_h, "x", p.kernel_w,
                                          " is smaller than the weight's"), in);
      }
      if ((p.kernel_h - w.dims[2]) % 2 != 0 || (p.kernel_w - w.dims[3]) % 2 != 0) {
        // Only an even growth keeps the kernel centred, so SAME convolution is unchanged.
        return InvalidOperands(kind, absl::StrCat("target kernel ", p.kernel_h, "x", p.kernel_w,
                                          " must grow each side by an even amount"), in);
      }
      TensorType out = TensorType::RowMajor(w.dtype, {w.dims[0], w.dims[1], p.kernel_h, p.kernel_w});
      out.split[0] = SplitAt(w, 0);
      out.split[1] = SplitAt(w, 1);
      return std::vector<TensorType>{out};
    }
    case OpKind::kReshape: {
      int64_t n_out = 1;
      for (int64_t d : p.shape) {
        if (d < 0) return InvalidOperands(kind, absl::StrCat("target shape ", DimsToString(p.shape), " has a negative dimension"), in);
        n_out *= d;
      }
      if (n_out != in[0].num_elements()) {
        return InvalidOperands(kind, absl::StrCat("target shape ", DimsToString(p.shape), " has ", n_out,
                                          " elements, input has ", in[0].num_elements()), in);
      }
      return std::vector<TensorType>{TensorType::RowMajor(in[0].dtype, p.shape)};
    }
    case OpKind::kMergeGConv: {
      const TensorType& w = in[0];
      if (w.rank() != 4) return InvalidOperands(kind, "weight must be 4-D (Cout,Cin/groups,KH,KW)", in);
      if (p.groups < 1 || p.count < 1 || p.groups % p.count != 0) {
        return InvalidOperands(kind, absl::StrCat("count ", p.count, " must divide groups ", p.groups), in);
      }
      if (w.dims[0] % p.groups != 0) {
        return InvalidOperands(kind, absl::StrCat(w.dims[0], " output channels do not divide into ", p.groups,
                                          " groups"), in);
      }
      return std::vector<TensorType>{
          TensorType::RowMajor(w.dtype, {w.dims[0], w.dims[1] * p.count, w.dims[2], w.dims[3]})};
    }
    case OpKind::kConstPool:
    case OpKind::kConstIConv:
    case OpKind::kConstIMatMul:
    case OpKind::kConstOnes:
      return Constant(kind, p);
    case OpKind::kBatchNorm: {
      const TensorType& x = in[0];
      if (x.rank() < 2) return InvalidOperands(kind, "input needs rank >= 2 (N,C,...)", in);
      for (int i = 1; i < 5; ++i) {
        if (in[i].rank() != 1 || in[i].dims[0] != x.dims[1]) {
          return InvalidOperands(kind, absl::StrCat("scale, bias, mean and variance must be 1-D of size C=",
                                            x.dims[1]), in);
        }
      }
      TensorType out = TensorType::RowMajor(x.dtype, x.dims);
      out.split = x.split;
      out.split.resize(x.rank());
      return std::vector<TensorType>{out};
    }
    case OpKind::kOpaque:
      if (p.opaque.op_type.empty()) return InvalidOperands(kind, "opaque operator without an op_type", in);
      if (!ValidSlots(p.opaque.input_slots, n, /*all=*/false)) {
        return InvalidOperands(kind, "input_slots do not name each input once", in);
      }
      if (!ValidSlots(p.opaque.output_slots, static_cast<int>(p.opaque.output_types.size()), /*all=*/true) ||
          std::count(p.opaque.output_slots.begin(), p.opaque.output_slots.end(), OpaqueInfo::kSideConstant) > 0) {
        return InvalidOperands(kind, "output_slots do not name each output once", in);
      }
      return p.opaque.output_types;
    case OpKind::kFusedGemm: {
      // A composite's outputs are its decomposition's, split records included.
      auto g = DecompositionOf(kind, p, in);
      if (!g.ok()) return g.status();
      std::vector<TensorType> out;
      for (const GraphOutput& o : g->outputs()) out.push_back(g->type(o.tensor));
      return out;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown operator kind ", static_cast<int>(kind)));
}

}  // namespace taso
