#include "core/file_write.h"

#include <cstdlib>
#include <filesystem>
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

TEST(AtomicFileWriterTest, PiecesAppearOnlyOnCommit) {
  const std::string path = TempDir() + "/pieces.data";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  {
    AtomicFileWriter writer(path);
    ASSERT_TRUE(writer.Append("ab").ok());
    ASSERT_TRUE(writer.Append(std::string(5000, 'c')).ok());
    EXPECT_EQ(writer.size(), 5002);
    EXPECT_EQ(Read(path), "old");  // not yet
    ASSERT_TRUE(writer.Commit().ok());
    EXPECT_FALSE(writer.Append("late").ok());
  }
  EXPECT_EQ(Read(path), "ab" + std::string(5000, 'c'));
  {
    AtomicFileWriter abandoned(path);
    ASSERT_TRUE(abandoned.Append("never").ok());
  }
  EXPECT_EQ(Read(path), "ab" + std::string(5000, 'c'));  // the old file stays, and no partial file is left
  int left = 0;
  for (const auto& e : std::filesystem::directory_iterator(TempDir())) {
    left += e.path().filename().string().find("pieces.data.partial") != std::string::npos;
  }
  EXPECT_EQ(left, 0);
}

// A full disk (ENOSPC) is tested with a real process in
// tests/faults/optimizer_faults_test.sh, which fills the disk under taso optimize.

}  // namespace
}  // namespace taso
