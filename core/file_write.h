// Writing a whole file so that a reader finds the old content or the new,
// never a part: the bytes go to a temporary file beside it, are flushed to
// disk, and are renamed over the path. A full disk or any other failure
// leaves no partial file behind and says why; a model cut short by a full
// disk must never look like an optimized model.
#ifndef TASO_CORE_FILE_WRITE_H_
#define TASO_CORE_FILE_WRITE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace taso {

// Whether a failed write's errno means the disk is full (ENOSPC, EDQUOT, or
// EFBIG, a file-size limit: the same situation for the user).
bool IsDiskFullErrno(int error);

// ResourceExhausted when the disk is full (IsDiskFullErrno),
// PermissionDenied when the directory cannot be written, Internal otherwise;
// the message names the path and the system's reason.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes);

// A file written piece by piece with the same guarantee: the pieces go to a
// temporary file beside `path`, renamed over it by Commit. Destroyed without
// Commit (or after a failure), it removes the temporary file. Errors as for
// WriteFileAtomically; the first one sticks.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view bytes);
  int64_t size() const { return size_; }
  // Flushes to disk and renames; nothing may be appended afterwards.
  absl::Status Commit();

 private:
  absl::Status Fail(int error);

  std::string path_, temp_;
  int fd_ = -1;
  int64_t size_ = 0;
  absl::Status status_;
};

// Writes all of `bytes` to the descriptor (a file or a pipe), going on after
// short writes and EINTR; 0 when done, else the errno that stopped it.
int WriteAll(int fd, absl::string_view bytes);

}  // namespace taso

#endif  // TASO_CORE_FILE_WRITE_H_
