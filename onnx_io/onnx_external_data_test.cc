// External tensor data: read in from beside the model, written back out, and
// refused clearly when it points outside the model's directory or past a
// file's end.
#include "onnx_io/onnx_external_data.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx_io/onnx_import.h"
#include "onnx_io/onnx_test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

using ::testing::HasSubstr;
using namespace onnx_test;  // NOLINT: the model builders

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : std::filesystem::temp_directory_path().string();
}

// Conv with a 4x3x3x3 weight (432 bytes) and a [4] bias, as the model holds them inline.
onnx::ModelProto ConvModel() {
  ModelSpec spec;
  spec.inputs = {Value("x", {1, 3, 8, 8})};
  spec.outputs = {Value("y", {1, 4, 8, 8})};
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 17);
  spec.initializers = {FloatInit("w", {4, 3, 3, 3}, w), FloatInit("b", {4}, {1, 2, 3, 4})};
  spec.nodes = {MakeNode("Conv", {"x", "w", "b"}, {"y"}, {MakeIntsAttribute("pads", {1, 1, 1, 1})})};
  onnx::ModelProto m = BuildProto(spec);
  // As exporters write them: raw little-endian bytes.
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    std::string raw(t.float_data_size() * sizeof(float), '\0');
    std::memcpy(raw.data(), t.float_data().data(), raw.size());
    t.clear_float_data();
    t.set_raw_data(raw);
  }
  return m;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(OnnxExternalDataTest, RoundTripsThroughADataFileBesideTheModel) {
  const onnx::ModelProto inline_model = ConvModel();
  std::string data;
  auto external = ExternalizeData(inline_model.SerializeAsString(), "conv.onnx.data", 100, data);
  ASSERT_TRUE(external.ok()) << external.status();
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(*external));
  EXPECT_EQ(written.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);  // w: 432 bytes
  EXPECT_NE(written.graph().initializer(1).data_location(), onnx::TensorProto::EXTERNAL);  // b: 16 bytes stay
  EXPECT_EQ(data.size(), 432u);

  // The importer alone keeps such a tensor opaque; read in from the file, it is a weight again.
  const std::string dir = TempDir() + "/external_round_trip";
  std::filesystem::create_directories(dir);
  WriteFile(dir + "/conv.onnx.data", data);
  auto inlined = InlineExternalData(*external, dir, 1 << 20);
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  EXPECT_EQ(inlined->files, std::vector<std::string>{"conv.onnx.data"});
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(inlined->model));
  EXPECT_EQ(back.graph().initializer(0).raw_data(), inline_model.graph().initializer(0).raw_data());
  EXPECT_FALSE(back.graph().initializer(0).has_data_location());
  auto imported = ImportOnnx(inlined->model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->opaque_ops_seen.empty());

  // A model without external data comes back as it was.
  auto plain = InlineExternalData(inline_model.SerializeAsString(), dir, 1 << 20);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->files.empty());
  EXPECT_EQ(plain->model, inline_model.SerializeAsString());
}

onnx::ModelProto PointingAt(const std::string& location, int64_t offset, int64_t length) {
  onnx::ModelProto m = ConvModel();
  onnx::TensorProto& w = *m.mutable_graph()->mutable_initializer(0);
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"location", location}, {"offset", std::to_string(offset)}, {"length", std::to_string(length)}}) {
    auto* kv = w.add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  }
  return m;
}

TEST(OnnxExternalDataTest, BadLocationsAndRangesAreClearErrors) {
  const std::string dir = TempDir() + "/external_errors";
  std::filesystem::create_directories(dir);
  WriteFile(dir + "/w.data", std::string(432, '\0'));
  for (const std::string escape : {"../w.data", "/etc/passwd", "a/../../w.data"}) {
    auto r = InlineExternalData(PointingAt(escape, 0, 432).SerializeAsString(), dir, 1 << 20);
    ASSERT_FALSE(r.ok()) << escape;
    EXPECT_THAT(r.status().message(), HasSubstr("must be a path inside the model's directory")) << escape;
  }
  auto missing = InlineExternalData(PointingAt("nothing.data", 0, 432).SerializeAsString(), dir, 1 << 20);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("tensor 'w' keeps its data in 'nothing.data'"));
  auto past = InlineExternalData(PointingAt("w.data", 100, 432).SerializeAsString(), dir, 1 << 20);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("past its end (432 bytes)"));
  auto large = InlineExternalData(PointingAt("w.data", 0, 432).SerializeAsString(), dir, 300);
  ASSERT_FALSE(large.ok());
  EXPECT_THAT(large.status().message(), HasSubstr("the limit on model size"));
  EXPECT_TRUE(InlineExternalData(PointingAt("w.data", 0, 432).SerializeAsString(), dir, 1 << 20).ok());
}

}  // namespace
}  // namespace taso
