#include "testing/tensors.h"

#include <utility>

#include "testing/tensor_types.h"

namespace taso::testing {

IntTensor IntTensorOf(std::vector<int64_t> dims, std::vector<int32_t> data) {
  return IntTensor{F32(std::move(dims)), std::move(data)};
}

FloatTensor FloatTensorOf(std::vector<int64_t> dims, std::vector<float> data) {
  return FloatTensor{F32(std::move(dims)), std::move(data)};
}

}  // namespace taso::testing
