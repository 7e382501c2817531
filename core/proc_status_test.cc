#include "core/proc_status.h"

#include <vector>

#include "gtest/gtest.h"

namespace taso {
namespace {

TEST(ProcStatusTest, ResidentMemoryGrowsWithWhatIsTouched) {
  const int64_t before = ProcStatusKib(0, "VmHWM");
  ASSERT_GT(before, 0);
  std::vector<char> block(64 << 20, 1);  // 64 MiB, every page written
  EXPECT_GE(ProcStatusKib(0, "VmHWM"), before + (32 << 10)) << "block[0]=" << static_cast<int>(block[0]);
}

TEST(ProcStatusTest, MissingFieldOrProcessIsMinusOne) {
  EXPECT_EQ(ProcStatusKib(0, "NoSuchField"), -1);
  EXPECT_EQ(ProcStatusKib(-7, "VmRSS"), -1);
}

}  // namespace
}  // namespace taso
