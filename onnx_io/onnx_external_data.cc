// External tensor data in and out (see the header). The ONNX format: a
// tensor with data_location EXTERNAL carries key/value pairs "location"
// (a path relative to the model's directory), "offset" and "length" (bytes).
#include "onnx_io/onnx_external_data.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/file_write.h"
#include "onnx/onnx_pb.h"
#include "onnx_io/onnx_common.h"
#include "onnx_io/onnx_external_data_internal.h"

namespace taso {
namespace {

namespace fs = std::filesystem;
using onnx_internal::HasExternalData;

// Lets a runtime map the data file and read tensors in place.
constexpr int64_t kAlignment = 4096;

absl::StatusOr<onnx::ModelProto> ParseModel(const std::string& bytes) {
  return onnx_internal::ParseModelBytes(bytes, "cannot parse the model: the bytes are not a valid ONNX ModelProto");
}

// Every tensor of the graph and its subgraphs that may hold data.
void ForEachTensor(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& fn) {
  for (auto& t : *graph.mutable_initializer()) fn(t);
  for (auto& node : *graph.mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_t()) fn(*a.mutable_t());
      for (auto& t : *a.mutable_tensors()) fn(t);
      if (a.has_g()) ForEachTensor(*a.mutable_g(), fn);
      for (auto& g : *a.mutable_graphs()) ForEachTensor(g, fn);
    }
  }
}

struct ExternalRange {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

absl::StatusOr<ExternalRange> ReadRange(const onnx::TensorProto& t) {
  ExternalRange r;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") r.location = kv.value();
    if ((kv.key() == "offset" && !absl::SimpleAtoi(kv.value(), &r.offset)) ||
        (kv.key() == "length" && !absl::SimpleAtoi(kv.value(), &r.length))) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': external data ", kv.key(), " '",
                                                     kv.value(), "' is not a number"));
    }
  }
  if (r.offset < 0 || r.length < -1) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': negative external data offset or length"));
  }
  return r;
}

// Makes `t` refer to `length` bytes at `offset` of `location`.
void SetExternalReference(onnx::TensorProto& t, const std::string& location, int64_t offset, int64_t length) {
  std::string().swap(*t.mutable_raw_data());  // clear_raw_data would keep the bytes' memory
  t.clear_raw_data();
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                   {"offset", std::to_string(offset)},
                                   {"length", std::to_string(length)}}) {
    auto* kv = t.add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
}

int64_t Aligned(int64_t offset) { return (offset + kAlignment - 1) / kAlignment * kAlignment; }

absl::StatusOr<std::string> ReadTensorData(const ExternalData& data, const onnx::TensorProto& t) {
  auto range = ReadRange(t);
  if (!range.ok()) return range.status();
  return data.Read(t.name(), range->location, range->offset, range->length);
}

}  // namespace

ExternalData ExternalData::Directory(std::string dir) {
  ExternalData data;
  data.has_dir_ = true;
  data.dir_ = dir.empty() ? "." : std::move(dir);
  return data;
}

void ExternalData::AddFile(std::string location, std::shared_ptr<const std::string> bytes) {
  files_[std::move(location)] = std::move(bytes);
}

absl::StatusOr<std::string> ExternalData::Read(const std::string& tensor, const std::string& location, int64_t offset,
                                               int64_t length) const {
  const fs::path p(location);
  bool escapes = location.empty() || p.is_absolute();
  for (const auto& part : p) escapes = escapes || part == "..";
  if (escapes) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor, "': external data location '", location,
                                                   "' must be a path inside the model's directory"));
  }
  auto in_memory = files_.find(location);
  int64_t size = 0;
  if (in_memory != files_.end()) {
    size = static_cast<int64_t>(in_memory->second->size());
  } else {
    std::error_code ec;
    size = has_dir_ ? static_cast<int64_t>(fs::file_size(fs::path(dir_) / p, ec)) : 0;
    if (!has_dir_ || ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", tensor, "' keeps its data in '", location, "', which cannot be read beside the model",
                       has_dir_ ? absl::StrCat(": ", ec.message()) : " (the model was given as bytes, without files)"));
    }
  }
  if (length < 0) length = size - offset;
  if (offset + length > size || length < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor, "': bytes ", offset, "..", offset + length,
                                                   " of '", location, "' are past its end (", size, " bytes)"));
  }
  if (in_memory != files_.end()) return in_memory->second->substr(offset, length);
  std::string bytes(static_cast<size_t>(length), '\0');
  std::ifstream in(fs::path(dir_) / p, std::ios::binary);
  in.seekg(offset);
  if (!in.read(bytes.data(), length)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor, "': cannot read '", location, "'"));
  }
  return bytes;
}

namespace onnx_internal {

absl::Status LoadExternalTensors(onnx::ModelProto& model, const ExternalData& data, int64_t max_bytes,
                                 const std::string& limit, int64_t& total) {
  absl::Status status;
  ForEachTensor(*model.mutable_graph(), [&](onnx::TensorProto& t) {
    if (!status.ok() || !HasExternalData(t)) return;
    auto bytes = ReadTensorData(data, t);
    if (!bytes.ok()) {
      status = bytes.status();
      return;
    }
    total += static_cast<int64_t>(bytes->size());
    if (total > max_bytes) {
      status = absl::InvalidArgumentError(absl::StrCat("the model with its external data is over ", max_bytes >> 20,
                                                       " MiB (", limit, ")"));
      return;
    }
    t.set_raw_data(*std::move(bytes));
    t.clear_external_data();
    t.clear_data_location();
  });
  return status;
}

void MoveTensorsOut(onnx::ModelProto& model, OnnxExternalSink& sink) {
  ForEachTensor(*model.mutable_graph(), [&](onnx::TensorProto& t) {
    if (HasExternalData(t) || !t.has_raw_data() || static_cast<int64_t>(t.raw_data().size()) < sink.min_bytes) return;
    sink.data.resize(Aligned(static_cast<int64_t>(sink.data.size())), '\0');
    const int64_t offset = static_cast<int64_t>(sink.data.size());
    sink.data += t.raw_data();
    SetExternalReference(t, sink.location, offset, static_cast<int64_t>(sink.data.size()) - offset);
  });
}

}  // namespace onnx_internal

absl::StatusOr<bool> UsesExternalData(const std::string& model_bytes) {
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  bool uses = false;
  ForEachTensor(*model->mutable_graph(), [&](onnx::TensorProto& t) { uses = uses || HasExternalData(t); });
  return uses;
}

absl::StatusOr<std::vector<std::string>> ExternalDataLocations(const std::string& model_bytes) {
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  std::vector<std::string> locations;
  absl::Status status;
  ForEachTensor(*model->mutable_graph(), [&](onnx::TensorProto& t) {
    if (!status.ok() || !HasExternalData(t)) return;
    auto range = ReadRange(t);
    if (!range.ok()) {
      status = range.status();
    } else if (std::find(locations.begin(), locations.end(), range->location) == locations.end()) {
      locations.push_back(range->location);
    }
  });
  if (!status.ok()) return status;
  return locations;
}

namespace {

// `model` (parsed from `model_bytes`) with every external tensor read in,
// as one message: `model_bytes` itself when it named no external data.
absl::StatusOr<std::string> InlineParsed(onnx::ModelProto& model, const std::string& model_bytes,
                                         const ExternalData& data, int64_t max_bytes, const std::string& limit) {
  int64_t total = static_cast<int64_t>(model_bytes.size());
  absl::Status loaded = onnx_internal::LoadExternalTensors(model, data, max_bytes, limit, total);
  if (!loaded.ok()) return loaded;
  return total == static_cast<int64_t>(model_bytes.size()) ? model_bytes : model.SerializeAsString();
}

}  // namespace

absl::StatusOr<std::string> InlineExternalData(const std::string& model_bytes, const ExternalData& data,
                                               int64_t max_bytes) {
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  const bool message_limit = max_bytes >= INT_MAX;
  return InlineParsed(*model, model_bytes, data, message_limit ? INT_MAX : max_bytes,
                      message_limit ? "2 GiB, what one protobuf message holds: optimize it without --server, which "
                                      "reads the data files beside the model"
                                    : "the limit on model size");
}

absl::StatusOr<std::string> ExternalizeData(const std::string& model_bytes, OnnxExternalSink& sink) {
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  sink.data.clear();
  onnx_internal::MoveTensorsOut(*model, sink);
  return model->SerializeAsString();
}

absl::Status WriteOnnxFiles(const std::string& path, const std::string& model_bytes, const ExternalData& data,
                            bool external, int64_t min_bytes) {
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  if (!external) {
    auto whole = InlineParsed(*model, model_bytes, data, INT_MAX,
                              "2 GiB, what one protobuf message holds: write it with external data");
    if (!whole.ok()) return whole.status();
    return WriteFileAtomically(path, *whole);
  }
  const std::string location = fs::path(path).filename().string() + ".data";
  AtomicFileWriter writer((fs::path(path).parent_path() / location).string());
  absl::Status status;
  int moved = 0;
  // A tensor at a time: the model's data is never held whole.
  ForEachTensor(*model->mutable_graph(), [&](onnx::TensorProto& t) {
    if (!status.ok()) return;
    std::string bytes;
    if (HasExternalData(t)) {
      auto read = ReadTensorData(data, t);
      if (!read.ok()) {
        status = read.status();
        return;
      }
      bytes = *std::move(read);
    } else if (t.has_raw_data() && static_cast<int64_t>(t.raw_data().size()) >= min_bytes) {
      bytes = std::move(*t.mutable_raw_data());
    } else {
      return;
    }
    status = writer.Append(std::string(Aligned(writer.size()) - writer.size(), '\0'));
    const int64_t offset = writer.size();
    if (status.ok()) status = writer.Append(bytes);
    SetExternalReference(t, location, offset, static_cast<int64_t>(bytes.size()));
    ++moved;
  });
  if (!status.ok()) return status;
  if (moved == 0) return WriteFileAtomically(path, model_bytes);  // nothing large: one file
  if (absl::Status s = writer.Commit(); !s.ok()) return s;
  return WriteFileAtomically(path, model->SerializeAsString());
}

}  // namespace taso
