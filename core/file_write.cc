#include "core/file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace taso {
namespace {

}  // namespace

bool IsDiskFullErrno(int error) { return error == ENOSPC || error == EDQUOT || error == EFBIG; }

namespace {

absl::Status ErrnoStatus(int error, const std::string& path) {
  const std::string why = absl::StrCat("cannot write ", path, ": ", std::strerror(error));
  if (IsDiskFullErrno(error)) {
    return absl::ResourceExhaustedError(absl::StrCat(why, " (the disk is full; nothing was written)"));
  }
  switch (error) {
    case EACCES:
    case EPERM:
    case EROFS:
    case ENOENT:
    case ENOTDIR:
      return absl::PermissionDeniedError(why);
    default:
      return absl::InternalError(why);
  }
}

}  // namespace

int WriteAll(int fd, absl::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;  // no progress and no reason: do not spin
    done += static_cast<size_t>(n);
  }
  return 0;
}

AtomicFileWriter::AtomicFileWriter(std::string path)
    // Same directory, so the rename stays on one file system.
    : path_(std::move(path)), temp_(absl::StrCat(path_, ".partial.", getpid())) {
  fd_ = open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) status_ = ErrnoStatus(errno, path_);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (fd_ >= 0 || !status_.ok()) std::remove(temp_.c_str());
}

absl::Status AtomicFileWriter::Fail(int error) {
  if (status_.ok()) status_ = ErrnoStatus(error, path_);
  return status_;
}

absl::Status AtomicFileWriter::Append(absl::string_view bytes) {
  if (!status_.ok()) return status_;
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, " was already committed"));
  if (int error = WriteAll(fd_, bytes); error != 0) return Fail(error);
  size_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (!status_.ok()) return status_;
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat(path_, " was already committed"));
  int error = fsync(fd_) != 0 ? errno : 0;
  if (close(fd_) != 0 && error == 0) error = errno;
  fd_ = -1;
  if (error == 0 && std::rename(temp_.c_str(), path_.c_str()) != 0) error = errno;
  if (error != 0) return Fail(error);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes) {
  AtomicFileWriter writer(path);
  if (absl::Status s = writer.Append(bytes); !s.ok()) return s;
  return writer.Commit();
}

}  // namespace taso
