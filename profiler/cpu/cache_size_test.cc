#include "profiler/cpu/cache_size.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace taso::profiler {
namespace {

void WriteCache(const std::filesystem::path& dir, const std::string& index, const std::string& level,
                const std::string& type, const std::string& size) {
  std::filesystem::create_directories(dir / index);
  std::ofstream(dir / index / "level") << level << "\n";
  std::ofstream(dir / index / "type") << type << "\n";
  std::ofstream(dir / index / "size") << size << "\n";
}

TEST(LastLevelCacheTest, TakesTheHighestDataOrUnifiedLevel) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "cache";
  WriteCache(dir, "index0", "1", "Data", "48K");
  WriteCache(dir, "index1", "1", "Instruction", "32K");
  WriteCache(dir, "index2", "2", "Unified", "1024K");
  WriteCache(dir, "index3", "3", "Unified", "32768K");
  EXPECT_EQ(LastLevelCacheBytesIn(dir.string()), int64_t{32} << 20);
  // An instruction cache is never the answer, whatever its level.
  WriteCache(dir, "index4", "4", "Instruction", "64M");
  EXPECT_EQ(LastLevelCacheBytesIn(dir.string()), int64_t{32} << 20);
}

TEST(LastLevelCacheTest, NothingKnownIsZero) {
  EXPECT_EQ(LastLevelCacheBytesIn("/nonexistent/cache"), 0);
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "garbled";
  WriteCache(dir, "index0", "x", "Data", "48K");
  WriteCache(dir, "index1", "2", "Unified", "lots");
  EXPECT_EQ(LastLevelCacheBytesIn(dir.string()), 0);
}

}  // namespace
}  // namespace taso::profiler
