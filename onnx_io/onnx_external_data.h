// ONNX models whose tensors live in external files (onnx.save with
// save_as_external_data; PyTorch's exporter beyond 2 GiB). One protobuf
// message holds at most 2 GiB, so a model's bytes keep their large tensors as
// references and the data travels beside them: import reads it from an
// ExternalData, export writes it to one (OnnxExternalSink), and a model is
// written to disk with its data file by WriteOnnxFiles. Only a model sent as
// one message (taso optimize --server) is inlined first.
#ifndef TASO_ONNX_IO_ONNX_EXTERNAL_DATA_H_
#define TASO_ONNX_IO_ONNX_EXTERNAL_DATA_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace taso {

// Where the files a model's external tensors name are read from: a
// directory (the model's), and files held in memory by name (a model
// exported here). Copies share the in-memory files.
class ExternalData {
 public:
  ExternalData() = default;  // no files: a model naming external data is refused
  static ExternalData Directory(std::string dir);
  // `location` (as the model names it) is read from `bytes`, not from disk.
  void AddFile(std::string location, std::shared_ptr<const std::string> bytes);
  bool empty() const { return !has_dir_ && files_.empty(); }

  // Bytes [offset, offset + length) of `location`, length -1 meaning to
  // its end. InvalidArgument naming `tensor` for a location outside the
  // directory (absolute or with ".."), a missing file or a range past its end.
  absl::StatusOr<std::string> Read(const std::string& tensor, const std::string& location, int64_t offset,
                                   int64_t length) const;

 private:
  bool has_dir_ = false;
  std::string dir_;
  std::map<std::string, std::shared_ptr<const std::string>> files_;
};

// Whether any tensor of the model (initializers and Constant values,
// subgraphs included) keeps its data in an external file.
absl::StatusOr<bool> UsesExternalData(const std::string& model_bytes);

// The files the model's external tensors name ("location"), each once, in
// the order first named; empty when it keeps every tensor inline.
absl::StatusOr<std::vector<std::string>> ExternalDataLocations(const std::string& model_bytes);

// The model as one message, every external tensor read from `data` (for a
// server, which takes models as one message). InvalidArgument when the total
// is above `max_bytes` (the message names the limit) or above the 2 GiB one
// protobuf message holds; Read's errors otherwise.
absl::StatusOr<std::string> InlineExternalData(const std::string& model_bytes, const ExternalData& data,
                                               int64_t max_bytes);

// Where export writes the tensors of `min_bytes` or more instead of inline:
// `data` becomes the file `location` names, tensors at 4 KiB-aligned offsets.
struct OnnxExternalSink {
  std::string location;
  int64_t min_bytes = 1024;
  std::string data;
};

// The model with each inline tensor of `sink.min_bytes` or more moved to
// `sink.data` (replacing what it held).
absl::StatusOr<std::string> ExternalizeData(const std::string& model_bytes, OnnxExternalSink& sink);

// Writes the model to `path`. With `external`, every tensor of `min_bytes`
// or more, and every one already external (read from `data`), goes to one
// file beside it, PATH's file name plus ".data", streamed a tensor at a
// time; a model with no such tensor is written whole. Both files are
// written under temporary names and renamed, the data file first.
absl::Status WriteOnnxFiles(const std::string& path, const std::string& model_bytes, const ExternalData& data,
                            bool external, int64_t min_bytes = 1024);

}  // namespace taso

#endif  // TASO_ONNX_IO_ONNX_EXTERNAL_DATA_H_
