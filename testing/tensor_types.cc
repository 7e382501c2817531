#include "testing/tensor_types.h"

#include <utility>

namespace taso::testing {

TensorType F32(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kFloat32, std::move(dims)); }

TensorType Strided(std::vector<int64_t> dims, std::vector<int64_t> strides) {
  TensorType t = F32(std::move(dims));
  t.strides = std::move(strides);
  return t;
}

}  // namespace taso::testing
