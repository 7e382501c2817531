#include "core/file_write.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace taso {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TempDir() { return std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp"; }

TEST(WriteFileAtomicallyTest, ReplacesTheWholeFile) {
  const std::string path = TempDir() + "/model.onnx";
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100000, 'a')).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "short").ok());
  EXPECT_EQ(Read(path), "short");
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = TempDir() + "/no/such/dir/out.onnx";
  absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
}

// A full disk (ENOSPC) is tested with a real process in
// tests/faults/optimizer_faults_test.sh, which fills the disk under taso optimize.

}  // namespace
}  // namespace taso
