// ONNX models whose tensors live in external files (onnx.save with
// save_as_external_data; PyTorch's exporter beyond 2 GiB). The optimizer
// works on a model's bytes, so a command that reads such a model from a file
// inlines the data first, and writes the result the way the input was
// written: the large tensors in a data file beside the model.
#ifndef TASO_ONNX_IO_ONNX_EXTERNAL_DATA_H_
#define TASO_ONNX_IO_ONNX_EXTERNAL_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso {

struct InlinedModel {
  std::string model;                // the model with every tensor's data inline
  std::vector<std::string> files;   // the external files it read, as the model names them; empty: none
};

// Reads every tensor's external data (graph initializers and Constant
// values, subgraphs included) from files under `dir`, the model file's
// directory. A location outside `dir` (absolute or with ".."), a missing
// file or a range past its end is InvalidArgument naming the tensor; so is a
// total above `max_bytes` (the message names the limit) or above what one
// protobuf message holds (2 GiB).
absl::StatusOr<InlinedModel> InlineExternalData(const std::string& model_bytes, const std::string& dir,
                                                int64_t max_bytes);

// The model with each tensor of `min_bytes` or more moved to `data`, at
// offsets aligned to 4 KiB, its location `location` (a file name to write
// `data` to beside the model).
absl::StatusOr<std::string> ExternalizeData(const std::string& model_bytes, const std::string& location,
                                            int64_t min_bytes, std::string& data);

}  // namespace taso

#endif  // TASO_ONNX_IO_ONNX_EXTERNAL_DATA_H_
