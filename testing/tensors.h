// Tensor values as tests write them: dims and data, row-major.
#ifndef TASO_TESTING_TENSORS_H_
#define TASO_TESTING_TENSORS_H_

#include <cstdint>
#include <vector>

#include "core/interpreter.h"

namespace taso::testing {

// The wrap-around int32 interpreter's value of a float32 tensor (its type is
// float32; the values are the interpreter's integers).
IntTensor IntTensorOf(std::vector<int64_t> dims, std::vector<int32_t> data);
FloatTensor FloatTensorOf(std::vector<int64_t> dims, std::vector<float> data);

}  // namespace taso::testing

#endif  // TASO_TESTING_TENSORS_H_
