// External tensor data on ModelProtos, for import and export (private to
// onnx_io; onnx_external_data.h is the public side).
#ifndef TASO_ONNX_IO_ONNX_EXTERNAL_DATA_INTERNAL_H_
#define TASO_ONNX_IO_ONNX_EXTERNAL_DATA_INTERNAL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/onnx_external_data.h"

namespace taso::onnx_internal {

// Reads every external tensor's data (graph initializers and Constant
// values, subgraphs included) from `data` into the tensor, in memory: the
// model may then be larger than one message holds. `total` grows by the
// bytes read; past `max_bytes` the call is InvalidArgument "the model with
// its external data is over N MiB (`limit`)".
absl::Status LoadExternalTensors(onnx::ModelProto& model, const ExternalData& data, int64_t max_bytes,
                                 const std::string& limit, int64_t& total);

// Moves each inline raw tensor of `sink.min_bytes` or more to the end of
// `sink.data` (4 KiB aligned), leaving a reference to `sink.location`.
void MoveTensorsOut(onnx::ModelProto& model, OnnxExternalSink& sink);

}  // namespace taso::onnx_internal

#endif  // TASO_ONNX_IO_ONNX_EXTERNAL_DATA_INTERNAL_H_
