// ONNX versions newer than the ONNX library we link (1.12: IR 8, opset 17).
// Current exporters write IR 9-10 and opsets 18-21, and ONNX Runtime 1.30
// runs up to IR 12 and opset 26. The library's checker refuses those files
// outright, and its shape inference reads a newer operator form by the
// nearest older schema (ReduceMean-18's axes input ignored, so "reduce every
// axis"): silently wrong shapes. So newer models are checked and inferred on
// a bridged copy, node for node the same values, each node rewritten into a
// form the library knows with the same output shapes and types; the model
// itself is never changed, and export writes the input's versions back.
#ifndef TASO_ONNX_IO_ONNX_VERSIONS_H_
#define TASO_ONNX_IO_ONNX_VERSIONS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace taso::onnx_internal {

// What the linked ONNX library's checker and shape inference know.
inline constexpr int64_t kLibraryIrVersion = 8;
inline constexpr int64_t kLibraryOpset = 17;
inline constexpr int64_t kLibraryMlOpset = 3;
// The newest a model may be: what ONNX Runtime 1.30 loads.
inline constexpr int64_t kNewestIrVersion = 12;
inline constexpr int64_t kNewestOpset = 26;
// The domain bridged nodes whose output shapes the library cannot infer are
// moved to: the checker and inference accept unknown domains and leave those
// outputs untyped.
inline constexpr char kUnknownShapeDomain[] = "taso.unknown_shape";

// InvalidArgument naming the version when the model is older than IR 3 or
// newer than kNewestIrVersion / kNewestOpset.
absl::Status CheckVersionsSupported(const onnx::ModelProto& model);

// Whether the library cannot check or infer `model` as it is.
bool NeedsBridge(const onnx::ModelProto& model);

// The copy described above, for checking and shape inference only. A default
// domain operator this version of TASO does not know at the model's opset is
// InvalidArgument naming the operator and the opset.
absl::StatusOr<onnx::ModelProto> BridgeToLibraryVersions(const onnx::ModelProto& model);

// The ONNX checker on the model, through the bridge when it is newer than the
// library. InvalidArgument with the checker's message.
absl::Status CheckModelAnyVersion(const onnx::ModelProto& model);

}  // namespace taso::onnx_internal

#endif  // TASO_ONNX_IO_ONNX_VERSIONS_H_
