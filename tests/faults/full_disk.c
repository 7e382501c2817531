// A full disk for fault tests, loaded with LD_PRELOAD into a real service:
// while the file named by TASO_FULL_DISK_FLAG exists, every write to a file
// opened under TASO_FULL_DISK_DIR fails with ENOSPC, as it would on a full
// file system; remove the flag and space is back. A tmpfs of fixed size would
// be the real thing, but mounting one needs privileges CI does not have, and
// a flag lets one test fill and free the disk under a running process.
//
// Only the calls RocksDB and our own writers use are covered: open*, creat
// and fopen (to learn which descriptors are under the directory), write,
// pwrite, writev, pwritev and fallocate. Stdio's own writes (fwrite) are not
// seen; reads and everything else pass through.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { kMaxTrackedFd = 1 << 16 };
static unsigned char tracked[kMaxTrackedFd];

static const char* watched_dir(size_t* length) {
  const char* dir = getenv("TASO_FULL_DISK_DIR");
  if (dir == NULL || dir[0] == '\0') return NULL;
  *length = strlen(dir);
  while (*length > 1 && dir[*length - 1] == '/') --*length;
  return dir;
}

static int under_watched_dir(int dirfd, const char* path) {
  size_t length = 0;
  const char* dir = watched_dir(&length);
  if (dir == NULL || path == NULL) return 0;
  char resolved[4096];
  if (path[0] != '/') {
    if (dirfd != AT_FDCWD) return 0;  // relative to another directory: not ours to guess
    if (getcwd(resolved, sizeof(resolved) - 1) == NULL) return 0;
    size_t used = strlen(resolved);
    snprintf(resolved + used, sizeof(resolved) - used, "/%s", path);
    path = resolved;
  }
  return strncmp(path, dir, length) == 0 && (path[length] == '/' || path[length] == '\0');
}

static void track(int fd, int watched) {
  if (fd >= 0 && fd < kMaxTrackedFd) tracked[fd] = (unsigned char)watched;
}

// True when a write to `fd` must fail: the descriptor is under the directory
// and the flag file exists.
static int disk_full(int fd) {
  if (fd < 0 || fd >= kMaxTrackedFd || !tracked[fd]) return 0;
  const char* flag = getenv("TASO_FULL_DISK_FLAG");
  if (flag == NULL || access(flag, F_OK) != 0) return 0;
  errno = ENOSPC;
  return 1;
}

// The next definition of `name` (glibc's), looked up once.
#define REAL(name)                       \
  static __typeof__(name)* real_##name; \
  if (!real_##name) real_##name = (__typeof__(name)*)dlsym(RTLD_NEXT, #name)

static int open_common(int dirfd, const char* path, int flags, mode_t mode) {
  REAL(openat);
  int fd = real_openat(dirfd, path, flags, mode);
  track(fd, under_watched_dir(dirfd, path));
  return fd;
}

static mode_t mode_arg(int flags, va_list args) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(args, int) : 0;
}

int open(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  return open_common(AT_FDCWD, path, flags, mode);
}
int open64(const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  return open_common(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  return open_common(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_arg(flags, args);
  va_end(args);
  return open_common(dirfd, path, flags, mode);
}
int creat(const char* path, mode_t mode) {
  return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
int creat64(const char* path, mode_t mode) {
  return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

// libstdc++'s file streams open through fopen (whose own open is internal to
// glibc) but write through write(2), which lands above.
FILE* fopen(const char* path, const char* how) {
  REAL(fopen);
  FILE* file = real_fopen(path, how);
  if (file != NULL) track(fileno(file), under_watched_dir(AT_FDCWD, path));
  return file;
}
FILE* fopen64(const char* path, const char* how) {
  REAL(fopen64);
  FILE* file = real_fopen64(path, how);
  if (file != NULL) track(fileno(file), under_watched_dir(AT_FDCWD, path));
  return file;
}

int close(int fd) {
  REAL(close);
  track(fd, 0);
  return real_close(fd);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  REAL(write);
  if (count > 0 && disk_full(fd)) return -1;
  return real_write(fd, buffer, count);
}
ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  REAL(pwrite);
  if (count > 0 && disk_full(fd)) return -1;
  return real_pwrite(fd, buffer, count, offset);
}
ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  REAL(pwrite64);
  if (count > 0 && disk_full(fd)) return -1;
  return real_pwrite64(fd, buffer, count, offset);
}
ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  REAL(writev);
  if (iovcnt > 0 && disk_full(fd)) return -1;
  return real_writev(fd, iov, iovcnt);
}
ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t offset) {
  REAL(pwritev);
  if (iovcnt > 0 && disk_full(fd)) return -1;
  return real_pwritev(fd, iov, iovcnt, offset);
}
int fallocate(int fd, int mode, off_t offset, off_t length) {
  REAL(fallocate);
  if (disk_full(fd)) return -1;
  return real_fallocate(fd, mode, offset, length);
}
int fallocate64(int fd, int mode, off_t offset, off_t length) {
  REAL(fallocate64);
  if (disk_full(fd)) return -1;
  return real_fallocate64(fd, mode, offset, length);
}
int posix_fallocate(int fd, off_t offset, off_t length) {
  REAL(posix_fallocate);
  if (disk_full(fd)) return ENOSPC;  // returns the error, does not set errno
  return real_posix_fallocate(fd, offset, length);
}
