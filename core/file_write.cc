#include "core/file_write.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace taso {
namespace {

absl::Status ErrnoStatus(int error, const std::string& path) {
  const std::string why = absl::StrCat("cannot write ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(absl::StrCat(why, " (the disk is full; nothing was written)"));
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

absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes) {
  // Same directory, so the rename stays on one file system.
  const std::string temp = absl::StrCat(path, ".partial.", getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, path);
  int error = WriteAll(fd, bytes);
  if (error == 0 && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    std::remove(temp.c_str());
    return ErrnoStatus(error, path);
  }
  return absl::OkStatus();
}

}  // namespace taso
