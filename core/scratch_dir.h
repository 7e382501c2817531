// A private temporary directory, removed with everything in it when the
// ScratchDir goes out of scope: for files a tool hands to another program
// (Graphviz's input, models for ONNX Runtime).
#ifndef TASO_CORE_SCRATCH_DIR_H_
#define TASO_CORE_SCRATCH_DIR_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taso {

class ScratchDir {
 public:
  // A new directory under TMPDIR named "taso-`purpose`-XXXXXX";
  // PermissionDenied (mentioning TMPDIR) when it cannot be made.
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
