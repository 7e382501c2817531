// Values for an opaque operator's shape-like operands that are not constants
// of the model but that its output shape determines: the shapes, pads,
// slice bounds and scales a PyTorch export computes with Shape/Gather/Concat
// arithmetic, which ONNX Runtime folds into constants when it loads the
// model. A one-operator model (ort_opaque_model.h) needs them: an input the
// worker fills with zeros would make Expand, Pad or Slice another operator,
// or one ORT refuses.
#ifndef TASO_PROFILER_ORT_OPAQUE_OPERANDS_H_
#define TASO_PROFILER_ORT_OPAQUE_OPERANDS_H_

#include <map>
#include <string>

#include "costs/signature.h"

namespace taso::profiler {

// By IR input index: little-endian values in the input's element type, for
// the operands of these default-domain operators that the signature holds
// no value for, where its output shape (all dimensions known) decides them:
//   Expand, Reshape (shape), ConstantOfShape (input): the output's dims
//   Tile (repeats): output / input per axis
//   Pad (pads): nothing before, output - input after
//   Slice (starts, ends, steps): from 0, step 1, as far as the output
//     reaches on each sliced axis (axes given, or the leading ones)
//   Resize (scales, sizes): output / input, or the output's dims (on its
//     `axes` where it lists them)
// Others, and ones whose operand or output shapes do not fit, get none.
std::map<int, std::string> DerivedOperands(const CanonicalSignature& signature);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_OPAQUE_OPERANDS_H_
