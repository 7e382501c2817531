#include "core/scratch_dir.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace taso {
namespace {

namespace fs = std::filesystem;

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::path(::testing::TempDir()) / "scratch";
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
    setenv("TMPDIR", tmp_.c_str(), 1);
  }
  // The "HOST" of "taso-PURPOSE-HOST-PID-XXXXXX", read from a directory made here.
  std::string HostOf(const std::string& path, const std::string& purpose) {
    std::string name = fs::path(path).filename().string();
    const std::string head = absl::StrCat("taso-", purpose, "-");
    const std::string tail = absl::StrCat("-", getpid(), "-");
    EXPECT_TRUE(absl::StartsWith(name, head)) << name;
    const size_t at = name.rfind(tail);
    EXPECT_NE(at, std::string::npos) << name;
    return name.substr(head.size(), at - head.size());
  }
  // A process id that ran and has exited (reaped), so nothing runs under it now.
  static pid_t DeadPid() {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    return child;
  }
  static void Touch(const fs::path& dir) {
    fs::create_directories(dir);
    std::ofstream(dir / "m0.onnx") << "model";
  }
  fs::path tmp_;
};

TEST_F(ScratchDirTest, MakesAPrivateDirectoryUnderTmpdirAndRemovesItWithItsFiles) {
  std::string path;
  {
    auto dir = ScratchDir::Make("test");
    ASSERT_TRUE(dir.ok()) << dir.status();
    path = dir->path();
    EXPECT_EQ(fs::path(path).parent_path(), tmp_);
    HostOf(path, "test");
    std::ofstream(dir->File("a.onnx")) << "x";
    EXPECT_TRUE(fs::exists(dir->File("a.onnx")));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(ScratchDirTest, RemovesWhatAKilledProcessOfItsPurposeLeftAndNothingElse) {
  auto first = MakePrivateTempDir("test");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string host = HostOf(*first, "test");
  const pid_t dead = DeadPid();
  const fs::path left = tmp_ / absl::StrCat("taso-test-", host, "-", dead, "-abc123");
  const fs::path live = tmp_ / absl::StrCat("taso-test-", host, "-", getppid(), "-def456");
  const fs::path other_purpose = tmp_ / absl::StrCat("taso-other-", host, "-", dead, "-ghi789");
  const fs::path other_host = tmp_ / absl::StrCat("taso-test-", host, "x-", dead, "-jkl012");
  for (const fs::path& d : {left, live, other_purpose, other_host}) Touch(d);

  auto second = MakePrivateTempDir("test");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(fs::exists(left)) << "a dead process's directory stayed";
  EXPECT_TRUE(fs::exists(live)) << "a running process's directory was removed";
  EXPECT_TRUE(fs::exists(other_purpose));
  EXPECT_TRUE(fs::exists(other_host));
  EXPECT_TRUE(fs::exists(*first)) << "this process's own directory was removed";
  EXPECT_NE(*first, *second);
  fs::remove_all(*first);
  fs::remove_all(*second);
}

TEST_F(ScratchDirTest, AnUnwritableTmpdirIsAnErrorNamingIt) {
  setenv("TMPDIR", (tmp_ / "missing").c_str(), 1);
  auto dir = ScratchDir::Make("test");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("TMPDIR"), std::string::npos) << dir.status();
}

}  // namespace
}  // namespace taso
