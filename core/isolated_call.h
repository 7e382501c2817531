// Running third-party code where its crash cannot take this process down.
//
// ONNX's shape inference segfaults on some malformed models (found by
// fuzz/onnx_import); a service importing users' models must answer such a
// model with an error, not die. RunIsolated forks, runs the work in the
// child (which shares this process's memory copy-on-write, so its input needs
// no copying) and returns the bytes it produced; a crash, an abort or a hang
// past the timeout becomes an error.
//
// The child of a multi-threaded process has only the calling thread; a lock
// another thread held at the fork stays held in the child. glibc's malloc is
// fork-safe; anything else the work takes could deadlock, which the timeout
// turns into DeadlineExceeded.
#ifndef TASO_CORE_ISOLATED_CALL_H_
#define TASO_CORE_ISOLATED_CALL_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace taso {

// `work`'s result, its error (code and message, as the child returned it;
// ResourceExhausted when it threw std::bad_alloc, Internal for any other
// exception),
// Aborted naming the signal when the child died by one, DeadlineExceeded
// past `timeout` (the child is killed), or Internal when the fork or the pipe
// fails. `what` names the work in messages ("ONNX shape inference").
absl::StatusOr<std::string> RunIsolated(const std::function<absl::StatusOr<std::string>()>& work,
                                        absl::Duration timeout, const std::string& what);

}  // namespace taso

#endif  // TASO_CORE_ISOLATED_CALL_H_
