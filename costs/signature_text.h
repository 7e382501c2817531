// Signatures as the one-line text the profiler prints (CanonicalSignature's
// key), so a user can paste a cache entry back into `taso profile measure`:
//   conv2d[stride=1x1,pad=same,act=relu](f32[1,64,56,56],f32[64,64,3,3])
//   conv2d[stride=1x1,pad=same,act=relu](f32[1,64,56,56],f32[64,64,3,3],f32[64])
//   matmul(f32[64,128],f32[128,256]{strides=1,128})
//   poolmax[kernel=3x3,stride=2x2,pad=same](f32[1,64,112,112])
// Parameters left out take their defaults. Opaque operators have no text form.
#ifndef TASO_COSTS_SIGNATURE_TEXT_H_
#define TASO_COSTS_SIGNATURE_TEXT_H_

#include <string>

#include "absl/status/statusor.h"
#include "costs/signature.h"

namespace taso::profiler {

// InvalidArgument names the part that does not parse.
absl::StatusOr<Signature> ParseSignature(const std::string& text);

}  // namespace taso::profiler

#endif  // TASO_COSTS_SIGNATURE_TEXT_H_
