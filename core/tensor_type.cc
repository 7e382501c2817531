#include "core/tensor_type.h"


#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kUnspecified: return "?";
    case DType::kFloat32: return "f32";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kFloat16: return "f16";
    case DType::kBool: return "bool";
  }
  return "?";
}

SplitTree MakeSplit(int64_t left_size, SplitTree left, SplitTree right) {
  return std::make_shared<const SplitNode>(SplitNode{left_size, std::move(left), std::move(right)});
}

bool SplitTreeEqual(const SplitTree& a, const SplitTree& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->left_size == b->left_size && SplitTreeEqual(a->left, b->left) &&
         SplitTreeEqual(a->right, b->right);
}

void HashSplitTree(const SplitTree& t, Hasher& h) {
  if (!t) {
    h.Add(0);
    return;
  }
  h.Add(1);
  h.AddSigned(t->left_size);
  HashSplitTree(t->left, h);
  HashSplitTree(t->right, h);
}

std::string SplitTreeToString(const SplitTree& t) {
  if (!t) return ".";
  return absl::StrCat("(", t->left_size, ":", SplitTreeToString(t->left), ",",
                      SplitTreeToString(t->right), ")");
}

absl::Status CheckDims(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension in ", DimsToString(dims)));
    if (d > 0 && n > kMaxTensorElements / d) {
      return absl::InvalidArgumentError(absl::StrCat("shape ", DimsToString(dims), " has more than ",
                                                     kMaxTensorElements, " elements"));
    }
    n *= d;
  }
  return absl::OkStatus();
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s = SaturatingMul(s, dims[i]);
  }
  return strides;
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

TensorType TensorType::RowMajor(DType dtype, std::vector<int64_t> dims) {
  TensorType t;
  t.dtype = dtype;
  t.strides = RowMajorStrides(dims);
  t.split.assign(dims.size(), nullptr);
  t.dims = std::move(dims);
  return t;
}

int64_t TensorType::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n = SaturatingMul(n, d);
  return n;
}

bool TensorType::is_row_major() const { return strides == RowMajorStrides(dims); }

bool TensorType::has_split_info() const {
  for (const SplitTree& t : split) {
    if (t) return true;
  }
  return false;
}

std::string TensorType::ToString() const {
  std::string s = absl::StrCat(DTypeName(dtype), DimsToString(dims));
  std::vector<std::string> extras;
  if (!is_row_major()) extras.push_back(absl::StrCat("strides=", absl::StrJoin(strides, ",")));
  for (size_t i = 0; i < split.size(); ++i) {
    if (split[i]) extras.push_back(absl::StrCat("split", i, "=", SplitTreeToString(split[i])));
  }
  if (!extras.empty()) absl::StrAppend(&s, "{", absl::StrJoin(extras, ";"), "}");
  return s;
}

void TensorType::HashInto(Hasher& h) const {
  h.Add(static_cast<uint64_t>(dtype));
  h.Add(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    h.AddSigned(dims[i]);
    h.AddSigned(i < strides.size() ? strides[i] : 0);
    HashSplitTree(i < split.size() ? split[i] : nullptr, h);
  }
}

bool operator==(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.dims != b.dims || a.strides != b.strides) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    const SplitTree sa = i < a.split.size() ? a.split[i] : nullptr;
    const SplitTree sb = i < b.split.size() ? b.split[i] : nullptr;
    if (!SplitTreeEqual(sa, sb)) return false;
  }
  return true;
}

}  // namespace taso
