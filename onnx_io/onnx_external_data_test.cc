// External tensor data: read in from beside the model, written back out, and
// refused clearly when it points outside the model's directory or past a
// file's end.
#include "onnx_io/onnx_external_data.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "onnx_io/onnx_export.h"
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(OnnxExternalDataTest, RoundTripsThroughADataFileBesideTheModel) {
  const onnx::ModelProto inline_model = ConvModel();
  OnnxExternalSink sink{"conv.onnx.data", 100};
  auto external = ExternalizeData(inline_model.SerializeAsString(), sink);
  ASSERT_TRUE(external.ok()) << external.status();
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(*external));
  EXPECT_EQ(written.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);  // w: 432 bytes
  EXPECT_NE(written.graph().initializer(1).data_location(), onnx::TensorProto::EXTERNAL);  // b: 16 bytes stay
  EXPECT_EQ(sink.data.size(), 432u);

  // Without its data the importer keeps such a tensor opaque; with the
  // directory it is a weight again, read in place.
  const std::string dir = TempDir() + "/external_round_trip";
  std::filesystem::create_directories(dir);
  WriteFile(dir + "/conv.onnx.data", sink.data);
  const ExternalData beside = ExternalData::Directory(dir);
  OnnxImportOptions options;
  options.external_data = beside;
  auto imported = ImportOnnx(*external, options);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->opaque_ops_seen.empty());
  EXPECT_TRUE(imported->side_constants.empty());
  EXPECT_EQ(imported->external_data_bytes, 432);

  // For a server, the same model as one message.
  auto inlined = InlineExternalData(*external, beside, 1 << 20);
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(*inlined));
  EXPECT_EQ(back.graph().initializer(0).raw_data(), inline_model.graph().initializer(0).raw_data());
  EXPECT_FALSE(back.graph().initializer(0).has_data_location());
  auto from_inline = ImportOnnx(*inlined);
  ASSERT_TRUE(from_inline.ok()) << from_inline.status();
  EXPECT_EQ(from_inline->external_data_bytes, 0);

  // A model without external data comes back as it was.
  auto plain = InlineExternalData(inline_model.SerializeAsString(), beside, 1 << 20);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, inline_model.SerializeAsString());
  EXPECT_FALSE(*UsesExternalData(inline_model.SerializeAsString()));
  EXPECT_TRUE(*UsesExternalData(*external));
  // The files it names, for their digests: the one data file, once.
  EXPECT_EQ(*ExternalDataLocations(*external), std::vector<std::string>{"conv.onnx.data"});
  EXPECT_TRUE(ExternalDataLocations(inline_model.SerializeAsString())->empty());
}

// Export with a sink writes the large weights out and a model that names
// them; read back through memory, it is the same graph.
TEST(OnnxExternalDataTest, ExportWritesLargeTensorsToItsSink) {
  auto imported = ImportOnnx(ConvModel().SerializeAsString());
  ASSERT_TRUE(imported.ok()) << imported.status();
  OnnxExternalSink sink{"exported.data", 100};
  auto exported = ExportOnnx(*imported, imported->graph, &sink);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(sink.data.size(), 432u);
  EXPECT_TRUE(*UsesExternalData(*exported));
  EXPECT_FALSE(ImportOnnx(*exported).ok());  // the checker looks for the data, which is in memory only

  ExternalData in_memory;
  in_memory.AddFile("exported.data", std::make_shared<const std::string>(sink.data));
  OnnxImportOptions options;
  options.external_data = in_memory;
  auto back = ImportOnnx(*exported, options);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->graph.num_nodes(), imported->graph.num_nodes());
  for (int i = 0; i < imported->graph.num_nodes(); ++i) {
    const Node& a = imported->graph.node(i);
    const Node& b = back->graph.node(i);
    ASSERT_EQ(a.data == nullptr, b.data == nullptr) << i;
    if (a.data != nullptr) {
      EXPECT_EQ(*a.data, *b.data) << i;
    }
  }
}

// The writer streams every external tensor (from wherever the model's data
// is) and every large inline one into PATH.data, aligned, and the files it
// writes read back as the same model.
TEST(OnnxExternalDataTest, WriteOnnxFilesPutsTheDataBesideTheModel) {
  const onnx::ModelProto inline_model = ConvModel();
  OnnxExternalSink sink{"somewhere-else.bin", 400};
  auto external = ExternalizeData(inline_model.SerializeAsString(), sink);
  ASSERT_TRUE(external.ok());
  ExternalData in_memory;
  in_memory.AddFile("somewhere-else.bin", std::make_shared<const std::string>(sink.data));

  const std::string dir = TempDir() + "/external_write";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteOnnxFiles(dir + "/out.onnx", *external, in_memory, /*external=*/true, /*min_bytes=*/10).ok());
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(ReadFile(dir + "/out.onnx")));
  for (const onnx::TensorProto& t : written.graph().initializer()) {
    EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();  // both are over 10 bytes
    EXPECT_EQ(t.external_data(0).value(), "out.onnx.data") << t.name();
  }
  EXPECT_EQ(written.graph().initializer(1).external_data(1).value(), "4096");  // the bias, aligned after w
  EXPECT_EQ(std::filesystem::file_size(dir + "/out.onnx.data"), 4096u + 16u);
  auto inlined = InlineExternalData(ReadFile(dir + "/out.onnx"), ExternalData::Directory(dir), 1 << 20);
  ASSERT_TRUE(inlined.ok()) << inlined.status();
  EXPECT_EQ(*inlined, inline_model.SerializeAsString());

  // Without `external`, one file with everything inline.
  ASSERT_TRUE(WriteOnnxFiles(dir + "/whole.onnx", *external, in_memory, /*external=*/false).ok());
  EXPECT_EQ(ReadFile(dir + "/whole.onnx"), inline_model.SerializeAsString());
  EXPECT_FALSE(std::filesystem::exists(dir + "/whole.onnx.data"));
  // A tensor whose data cannot be read fails the write, leaving no file.
  EXPECT_FALSE(WriteOnnxFiles(dir + "/broken.onnx", *external, ExternalData(), /*external=*/true).ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/broken.onnx"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/broken.onnx.data"));
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
  const ExternalData beside = ExternalData::Directory(dir);
  for (const std::string escape : {"../w.data", "/etc/passwd", "a/../../w.data"}) {
    auto r = InlineExternalData(PointingAt(escape, 0, 432).SerializeAsString(), beside, 1 << 20);
    ASSERT_FALSE(r.ok()) << escape;
    EXPECT_THAT(r.status().message(), HasSubstr("must be a path inside the model's directory")) << escape;
  }
  auto missing = InlineExternalData(PointingAt("nothing.data", 0, 432).SerializeAsString(), beside, 1 << 20);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("tensor 'w' keeps its data in 'nothing.data'"));
  auto past = InlineExternalData(PointingAt("w.data", 100, 432).SerializeAsString(), beside, 1 << 20);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("past its end (432 bytes)"));
  auto large = InlineExternalData(PointingAt("w.data", 0, 432).SerializeAsString(), beside, 300);
  ASSERT_FALSE(large.ok());
  EXPECT_THAT(large.status().message(), HasSubstr("the limit on model size"));
  EXPECT_TRUE(InlineExternalData(PointingAt("w.data", 0, 432).SerializeAsString(), beside, 1 << 20).ok());
  // Import reads through the same checks, and its limit counts the data.
  OnnxImportOptions options;
  options.external_data = beside;
  EXPECT_THAT(ImportOnnx(PointingAt("../w.data", 0, 432).SerializeAsString(), options).status().message(),
              HasSubstr("must be a path inside the model's directory"));
  options.max_model_bytes = 600;
  EXPECT_THAT(ImportOnnx(PointingAt("w.data", 0, 432).SerializeAsString(), options).status().message(),
              HasSubstr("the limit on model size"));
}

}  // namespace
}  // namespace taso
