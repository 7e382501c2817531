// A private temporary directory, removed with everything in it when the
// ScratchDir goes out of scope: for files a tool hands to another program
// (Graphviz's input, models for ONNX Runtime).
#ifndef TASO_CORE_SCRATCH_DIR_H_
#define TASO_CORE_SCRATCH_DIR_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taso {

// Makes a new directory under TMPDIR (else the system's temporary directory)
// named "taso-`purpose`-HOST-PID-XXXXXX" and returns its path; the caller
// removes it. A process that is killed cannot remove its own, so first this
// removes the directories of the same purpose and host whose process no
// longer runs: a killed optimizer's candidate models (up to gigabytes) do
// not pile up. The host in the name keeps containers that share a directory
// but not a process table from judging each other's. PermissionDenied
// (mentioning TMPDIR) when it cannot be made.
absl::StatusOr<std::string> MakePrivateTempDir(absl::string_view purpose);

class ScratchDir {
 public:
  // A new directory made by MakePrivateTempDir(purpose).
  static absl::StatusOr<ScratchDir> Make(absl::string_view purpose);
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir();

  const std::string& path() const { return path_; }
  std::string File(absl::string_view name) const;

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace taso

#endif  // TASO_CORE_SCRATCH_DIR_H_
