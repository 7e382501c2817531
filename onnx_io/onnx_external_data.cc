// External tensor data in and out (see the header). The ONNX format: a
// tensor with data_location EXTERNAL carries key/value pairs "location"
// (a path relative to the model's directory), "offset" and "length" (bytes).
#include "onnx_io/onnx_external_data.h"

#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "onnx_io/onnx_common.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

namespace fs = std::filesystem;
using onnx_internal::HasExternalData;

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
  const fs::path p(r.location);
  bool escapes = r.location.empty() || p.is_absolute();
  for (const auto& part : p) escapes = escapes || part == "..";
  if (escapes) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': external data location '", r.location,
                                                   "' must be a path inside the model's directory"));
  }
  if (r.offset < 0 || r.length < -1) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': negative external data offset or length"));
  }
  return r;
}

}  // namespace

absl::StatusOr<InlinedModel> InlineExternalData(const std::string& model_bytes, const std::string& dir,
                                                int64_t max_bytes) {
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  absl::Status status;
  int64_t total = static_cast<int64_t>(model_bytes.size());
  std::set<std::string> files;
  ForEachTensor(*model->mutable_graph(), [&](onnx::TensorProto& t) {
    if (!status.ok() || !HasExternalData(t)) return;
    auto range = ReadRange(t);
    if (!range.ok()) {
      status = range.status();
      return;
    }
    const fs::path path = fs::path(dir.empty() ? "." : dir) / range->location;
    std::error_code ec;
    const auto size = static_cast<int64_t>(fs::file_size(path, ec));
    if (ec) {
      status = absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "' keeps its data in '", range->location,
                                                       "', which cannot be read beside the model: ", ec.message()));
      return;
    }
    const int64_t length = range->length < 0 ? size - range->offset : range->length;
    if (range->offset + length > size || length < 0) {
      status = absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': bytes ", range->offset, "..",
                                                       range->offset + length, " of '", range->location,
                                                       "' are past its end (", size, " bytes)"));
      return;
    }
    total += length;
    if (total > max_bytes || total > INT_MAX) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "the model with its external data is over ", std::min<int64_t>(max_bytes, INT_MAX) >> 20,
          " MiB", total > INT_MAX ? " (2 GiB, what one protobuf message holds: larger models are not supported yet)"
                                  : " (the limit on model size)"));
      return;
    }
    std::string data(static_cast<size_t>(length), '\0');
    std::ifstream in(path, std::ios::binary);
    in.seekg(range->offset);
    if (!in.read(data.data(), length)) {
      status = absl::InvalidArgumentError(absl::StrCat("tensor '", t.name(), "': cannot read '", range->location, "'"));
      return;
    }
    files.insert(range->location);
    t.set_raw_data(std::move(data));
    t.clear_external_data();
    t.clear_data_location();
  });
  if (!status.ok()) return status;
  InlinedModel out;
  out.files.assign(files.begin(), files.end());
  out.model = files.empty() ? model_bytes : model->SerializeAsString();
  return out;
}

absl::StatusOr<std::string> ExternalizeData(const std::string& model_bytes, const std::string& location,
                                            int64_t min_bytes, std::string& data) {
  constexpr int64_t kAlignment = 4096;  // lets a runtime map the file and read tensors in place
  auto model = ParseModel(model_bytes);
  if (!model.ok()) return model.status();
  data.clear();
  ForEachTensor(*model->mutable_graph(), [&](onnx::TensorProto& t) {
    if (HasExternalData(t) || !t.has_raw_data() || static_cast<int64_t>(t.raw_data().size()) < min_bytes) return;
    data.resize((data.size() + kAlignment - 1) / kAlignment * kAlignment, '\0');
    const int64_t offset = static_cast<int64_t>(data.size());
    data += t.raw_data();
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                     {"offset", std::to_string(offset)},
                                     {"length", std::to_string(data.size() - offset)}}) {
      auto* kv = t.add_external_data();
      kv->set_key(key);
      kv->set_value(value);
    }
  });
  return model->SerializeAsString();
}

}  // namespace taso
