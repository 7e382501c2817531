#include "core/scratch_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"

namespace taso {

absl::StatusOr<ScratchDir> ScratchDir::Make(absl::string_view purpose) {
  std::error_code error;
  std::string pattern =
      (std::filesystem::temp_directory_path(error) / absl::StrCat("taso-", purpose, "-XXXXXX")).string();
  if (error || mkdtemp(pattern.data()) == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make a temporary directory for ", purpose, " files (check TMPDIR)"));
  }
  return ScratchDir(std::move(pattern));
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

}  // namespace taso
