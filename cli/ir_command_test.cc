#include "cli/ir_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/graph_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taso::cli {
namespace {

using ::testing::HasSubstr;

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(IrCommand, EmbeddedExample) {
  std::ostringstream out;
  ASSERT_TRUE(RunIrCommand({}, out).ok());
  EXPECT_THAT(out.str(), HasSubstr("5 operators"));
  EXPECT_THAT(out.str(), HasSubstr("conv2d[stride=1x1,pad=same,act=relu]"));
  EXPECT_THAT(out.str(), HasSubstr("block f32[1,4,5,5] sum="));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("unavailable")));
}

TEST(IrCommand, FileRoundTripGivesSameHashes) {
  const std::string path = WriteTemp("example.textproto", GraphToText(ExampleGraph()));
  std::ostringstream from_file, embedded;
  IrCommandOptions options;
  options.json = true;
  ASSERT_TRUE(RunIrCommand(options, embedded).ok());
  options.path = path;
  ASSERT_TRUE(RunIrCommand(options, from_file).ok());
  EXPECT_EQ(from_file.str(), embedded.str());
}

TEST(IrCommand, SeedChangesFingerprintNotStructure) {
  IrCommandOptions a, b;
  a.json = b.json = true;
  b.seed = 2;
  std::ostringstream oa, ob;
  ASSERT_TRUE(RunIrCommand(a, oa).ok());
  ASSERT_TRUE(RunIrCommand(b, ob).ok());
  EXPECT_NE(oa.str(), ob.str());
  const auto hash_of = [](const std::string& s) { return s.substr(s.find("structural_hash"), 60); };
  EXPECT_EQ(hash_of(oa.str()), hash_of(ob.str()));
}

TEST(IrCommand, BadFilesGiveClearErrors) {
  std::ostringstream out;
  IrCommandOptions options;
  options.path = "/nonexistent/graph.textproto";
  absl::Status s = RunIrCommand(options, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  options.path = WriteTemp("garbage.textproto", "nodes { id: 0 kind: ");
  s = RunIrCommand(options, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("not a valid taso.ir.Graph"));
  // A matmul whose operands do not fit.
  options.path = WriteTemp("bad_shapes.textproto", R"pb(
    nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: 2 dims: 4 } }
    nodes { id: 1 kind: OP_INPUT name: "y" type { dtype: DTYPE_FLOAT32 dims: 3 dims: 4 } }
    nodes { id: 2 kind: OP_MATMUL inputs { node: 0 } inputs { node: 1 } }
    outputs { name: "z" tensor { node: 2 } }
  )pb");
  s = RunIrCommand(options, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 2 (matmul): matmul: inner dimensions differ (4 vs 3)"));
}

}  // namespace
}  // namespace taso::cli
