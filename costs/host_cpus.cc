#include "costs/host_cpus.h"

#include <sched.h>

#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace taso::profiler {
namespace {

// One line of a sysfs file, "" when it cannot be read.
std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripTrailingAsciiWhitespace(line));
}

}  // namespace

std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

int CountPhysicalCores(const std::vector<std::string>& core_of) {
  std::set<std::string> cores;
  int unknown = 0;
  for (const std::string& core : core_of) {
    if (core.empty()) {
      ++unknown;  // no topology: the cpu counts as a core of its own
    } else {
      cores.insert(core);
    }
  }
  const int count = static_cast<int>(cores.size()) + unknown;
  return count > 0 ? count : 1;
}

int RuntimeDefaultThreads() {
  std::vector<std::string> core_of;
  for (int cpu : AllowedCpus()) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu", cpu, "/topology/");
    const std::string package = ReadLine(dir + "physical_package_id");
    const std::string core = ReadLine(dir + "core_id");
    core_of.push_back(package.empty() || core.empty() ? "" : absl::StrCat(package, ":", core));
  }
  return CountPhysicalCores(core_of);
}

}  // namespace taso::profiler
