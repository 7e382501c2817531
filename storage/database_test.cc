#include "storage/database.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/test_dir.h"

namespace taso::storage {
namespace {

using ::testing::HasSubstr;

DatabaseOptions Options(const std::string& path) {
  DatabaseOptions options;
  options.path = path;
  options.name_in_errors = "database " + path;
  options.families["tuned"] = rocksdb::ColumnFamilyOptions();
  return options;
}

absl::StatusOr<std::string> Read(Database& database, const std::string& family, const std::string& key) {
  auto handle = database.Family(family);
  if (!handle.ok()) return handle.status();
  std::string value;
  rocksdb::Status s = database.db()->Get(rocksdb::ReadOptions(), *handle, key, &value);
  if (!s.ok()) return absl::NotFoundError(s.ToString());
  return value;
}

TEST(Database, FamiliesAskedForLaterAreCreatedAndOpenAgainWithoutBeingNamed) {
  const std::string dir = FreshTestDir("families");
  {
    auto database = Database::Open(Options(dir));
    ASSERT_TRUE(database.ok()) << database.status();
    for (const char* family : {"tuned", "later", rocksdb::kDefaultColumnFamilyName.c_str()}) {
      auto handle = (*database)->Family(family);
      ASSERT_TRUE(handle.ok()) << handle.status();
      ASSERT_TRUE((*database)->db()->Put(rocksdb::WriteOptions(), *handle, "k", family).ok());
    }
  }
  // Reopened by a user that names none of them: RocksDB would refuse to open
  // a database without its families, so they open with the defaults.
  DatabaseOptions plain;
  plain.path = dir;
  auto database = Database::Open(plain);
  ASSERT_TRUE(database.ok()) << database.status();
  EXPECT_EQ(Read(**database, "later", "k").value_or(""), "later");
  EXPECT_EQ(Read(**database, "tuned", "k").value_or(""), "tuned");
  EXPECT_EQ(Read(**database, rocksdb::kDefaultColumnFamilyName, "k").value_or(""), "default");
}

TEST(Database, ASecondOpenSaysTheDatabaseIsInUse) {
  const std::string dir = FreshTestDir("locked");
  auto first = Database::Open(Options(dir));
  ASSERT_TRUE(first.ok());
  DatabaseOptions options = Options(dir);
  options.in_use_hint = "; stop it";
  auto second = Database::Open(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("database " + dir + " is in use by another process"));
  EXPECT_THAT(second.status().message(), HasSubstr("; stop it"));
}

TEST(Database, ReadOnlyOpensWhileAnotherHoldsTheLockAndSeesWhatWasWritten) {
  const std::string dir = FreshTestDir("shared");
  auto writer = Database::Open(Options(dir));
  ASSERT_TRUE(writer.ok());
  auto tuned = (*writer)->Family("tuned");
  ASSERT_TRUE(tuned.ok());
  rocksdb::WriteOptions sync;
  sync.sync = true;
  ASSERT_TRUE((*writer)->db()->Put(sync, *tuned, "k", "written").ok());

  DatabaseOptions options = Options(dir);
  options.read_only = true;
  auto reader = Database::Open(options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(Read(**reader, "tuned", "k").value_or(""), "written");
  EXPECT_FALSE((*reader)->db()->Put(rocksdb::WriteOptions(), *(*reader)->Family("tuned"), "k", "x").ok());
  auto missing = (*reader)->Family("never-created");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace taso::storage
