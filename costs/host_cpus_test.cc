#include "costs/host_cpus.h"

#include <thread>

#include "gtest/gtest.h"

namespace taso::profiler {
namespace {

TEST(HostCpus, HyperthreadSiblingsCountOnce) {
  // Two cores with two hardware threads each, as sysfs lists them.
  EXPECT_EQ(CountPhysicalCores({"0:0", "0:1", "0:0", "0:1"}), 2);
  // The same core id in two packages is two cores.
  EXPECT_EQ(CountPhysicalCores({"0:0", "1:0"}), 2);
}

TEST(HostCpus, CpusWithoutTopologyCountAsCores) {
  EXPECT_EQ(CountPhysicalCores({"", "", "0:0"}), 3);
  EXPECT_EQ(CountPhysicalCores({}), 1);
}

TEST(HostCpus, TheDefaultIsWithinTheAllowedCpus) {
  const int allowed = static_cast<int>(AllowedCpus().size());
  const int threads = RuntimeDefaultThreads();
  EXPECT_GE(threads, 1);
  EXPECT_LE(threads, allowed);
  EXPECT_LE(allowed, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace taso::profiler
