// Static type of a tensor: element type, dimensions, layout (strides) and the
// split trees that record how each dimension was assembled by concat.
#ifndef TASO_CORE_TENSOR_TYPE_H_
#define TASO_CORE_TENSOR_TYPE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/hash.h"

namespace taso {

enum class DType { kUnspecified = 0, kFloat32 = 1, kInt32 = 2, kInt64 = 3, kFloat16 = 4, kBool = 5 };

const char* DTypeName(DType dtype);

// A split tree records the concat boundaries along one dimension so that split
// can undo a concat exactly. nullptr is a leaf (no recorded boundary).
struct SplitNode;
using SplitTree = std::shared_ptr<const SplitNode>;
struct SplitNode {
  int64_t left_size;
  SplitTree left;
  SplitTree right;
};

SplitTree MakeSplit(int64_t left_size, SplitTree left, SplitTree right);
bool SplitTreeEqual(const SplitTree& a, const SplitTree& b);
void HashSplitTree(const SplitTree& t, Hasher& h);
// "(2:(1:.,.),.)" style; "." is a leaf.
std::string SplitTreeToString(const SplitTree& t);

// The largest element count a tensor may have: far past any model, and small
// enough that products of dims, strides and byte sizes stay inside int64.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// a * b and a + b, or the int64 limit of the result's sign when that
// overflows: element, byte and instance counts saturate instead of wrapping.
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_mul_overflow(a, b, &out)) return out;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return a < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}

// InvalidArgument when a dimension is negative or the dims hold more than
// kMaxTensorElements elements (checked before any product can overflow):
// what every reader of shapes from outside calls first.
absl::Status CheckDims(const std::vector<int64_t>& dims);

struct TensorType {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> dims;
  // Element strides, one per dimension. Values in interpreters are always
  // stored in logical row-major order; strides describe the layout the
  // operator would produce on a device and take part in equality and cost.
  std::vector<int64_t> strides;
  // One entry per dimension (nullptr when nothing is recorded).
  std::vector<SplitTree> split;

  // Row-major strides; a product past int64 saturates (CheckDims keeps
  // such types out of graphs).
  static TensorType RowMajor(DType dtype, std::vector<int64_t> dims);

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t num_elements() const;
  bool is_row_major() const;
  bool has_split_info() const;
  // Drops split info and makes the layout row-major.
  TensorType Plain() const { return RowMajor(dtype, dims); }
  // e.g. "f32[2,4]", "f32[4,2]{strides=1,4}", "f32[4,4]{split0=(2:.,.)}".
  std::string ToString() const;
  void HashInto(Hasher& h) const;
};

bool operator==(const TensorType& a, const TensorType& b);
inline bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
std::string DimsToString(const std::vector<int64_t>& dims);

}  // namespace taso

#endif  // TASO_CORE_TENSOR_TYPE_H_
