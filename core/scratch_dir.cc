#include "core/scratch_dir.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace taso {
namespace {

// This host's name with anything but letters, digits and dots replaced, so
// it cannot end the name's fields early.
std::string HostTag() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "host";
  std::string tag(host);
  for (char& c : tag) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') c = '_';
  }
  return tag;
}

bool ProcessGone(int64_t pid) { return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Removes `dir`'s entries named PREFIX + PID + "-..." whose PID no longer runs.
void RemoveLeftBehind(const std::filesystem::path& dir, const std::string& prefix) {
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!absl::StartsWith(name, prefix)) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dash = rest.find('-');
    int64_t pid = 0;
    if (dash == std::string::npos || !absl::SimpleAtoi(rest.substr(0, dash), &pid) || pid == getpid()) continue;
    if (!ProcessGone(pid)) continue;
    std::error_code ignored;
    std::filesystem::remove_all(it->path(), ignored);
  }
}

}  // namespace

absl::StatusOr<std::string> MakePrivateTempDir(absl::string_view purpose) {
  std::error_code error;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(error);
  const std::string prefix = absl::StrCat("taso-", purpose, "-", HostTag(), "-");
  if (!error) RemoveLeftBehind(tmp, prefix);
  std::string pattern = (tmp / absl::StrCat(prefix, getpid(), "-XXXXXX")).string();
  if (error || mkdtemp(pattern.data()) == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make a temporary directory for ", purpose, " files (check TMPDIR)"));
  }
  return pattern;
}

absl::StatusOr<ScratchDir> ScratchDir::Make(absl::string_view purpose) {
  auto path = MakePrivateTempDir(purpose);
  if (!path.ok()) return path.status();
  return ScratchDir(*std::move(path));
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

}  // namespace taso
