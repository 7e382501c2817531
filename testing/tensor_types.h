// Tensor types as tests write them: one call instead of a factory and a dtype.
#ifndef TASO_TESTING_TENSOR_TYPES_H_
#define TASO_TESTING_TENSOR_TYPES_H_

#include <cstdint>
#include <vector>

#include "core/tensor_type.h"

namespace taso::testing {

// A row-major float32 tensor type: the type most tests build with.
TensorType F32(std::vector<int64_t> dims);

// A float32 tensor type of `dims` laid out with these element strides (a
// transposed view, a broadcast operand).
TensorType Strided(std::vector<int64_t> dims, std::vector<int64_t> strides);

}  // namespace taso::testing

#endif  // TASO_TESTING_TENSOR_TYPES_H_
