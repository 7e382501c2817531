#include "core/isolated_call.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/file_write.h"

namespace taso {

absl::StatusOr<std::string> RunIsolated(const std::function<absl::StatusOr<std::string>()>& work,
                                        absl::Duration timeout, const std::string& what) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat(what, ": pipe: ", std::strerror(errno)));
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat(what, ": fork: ", std::strerror(errno)));
  }
  if (child == 0) {
    // The child: one status byte (the absl::StatusCode), then the result or
    // the message. _exit: no destructors or atexit handlers of the parent's.
    close(fds[0]);
    // The child dies by the signal, as the parent expects: no handler this
    // process installed (a sanitizer's, libFuzzer's) reports it as ours.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) signal(sig, SIG_DFL);
    // Nothing may leave the child but its answer: an exception escaping
    // `work` would unwind into the parent's code running in this copy.
    absl::StatusOr<std::string> result = absl::InternalError(absl::StrCat(what, " failed"));
    try {
      result = work();
    } catch (const std::bad_alloc&) {
      result = absl::ResourceExhaustedError(absl::StrCat(what, " ran out of memory"));
    } catch (const std::exception& e) {
      result = absl::InternalError(absl::StrCat(what, " threw: ", e.what()));
    } catch (...) {
      result = absl::InternalError(absl::StrCat(what, " threw an exception"));
    }
    std::string out(1, static_cast<char>(result.ok() ? 0 : static_cast<int>(result.status().code())));
    out += result.ok() ? *result : std::string(result.status().message());
    _exit(WriteAll(fds[1], out) == 0 ? 0 : 1);
  }
  close(fds[1]);
  std::string bytes;
  char buffer[1 << 16];
  const absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  while (true) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or dead)
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(what, " did not finish within ", absl::FormatDuration(timeout)));
  }
  if (WIFSIGNALED(status)) {
    return absl::AbortedError(
        absl::StrCat(what, " crashed (signal ", WTERMSIG(status), ", ", strsignal(WTERMSIG(status)), ")"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.empty()) {
    return absl::InternalError(absl::StrCat(what, " ended without a result (exit ", WEXITSTATUS(status), ")"));
  }
  const int code = static_cast<unsigned char>(bytes[0]);
  if (code != 0) return absl::Status(static_cast<absl::StatusCode>(code), bytes.substr(1));
  return bytes.substr(1);
}

}  // namespace taso
