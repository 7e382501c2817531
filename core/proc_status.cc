#include "core/proc_status.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace taso {

int64_t ProcStatusKib(int pid, absl::string_view field) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/status") : absl::StrCat("/proc/", pid, "/status"));
  const std::string prefix = absl::StrCat(field, ":");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, prefix)) return std::strtoll(line.c_str() + prefix.size(), nullptr, 10);
  }
  return -1;
}

}  // namespace taso
