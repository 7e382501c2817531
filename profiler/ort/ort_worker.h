// The node process the ort backend times models in (profiler/ort/worker.js):
// started once, spoken to in line-delimited JSON over its stdin and stdout,
// restarted when it has died. ONNX Runtime ships no C/C++ headers in the npm
// package we can install, so node drives it (shared/notes/build-offline.md).
#ifndef TASO_PROFILER_ORT_ORT_WORKER_H_
#define TASO_PROFILER_ORT_ORT_WORKER_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace taso::profiler {

struct OrtWorkerOptions {
  // worker.js; "" finds it (FindOrtWorker).
  std::string script;
  // The node executable, looked up in PATH when it has no slash.
  std::string node = "node";
  // Longest wait for one answer before the worker is killed (DEADLINE_EXCEEDED).
  absl::Duration call_timeout = absl::Minutes(10);
};

// worker.js: $TASO_ORT_WORKER, else profiler/ort/worker.js in this
// executable's runfiles (or $RUNFILES_DIR) or beside it in the Bazel output
// tree. FAILED_PRECONDITION naming the places looked at when none exists.
absl::StatusOr<std::string> FindOrtWorker();

class OrtWorker {
 public:
  explicit OrtWorker(OrtWorkerOptions options) : options_(std::move(options)) {}
  ~OrtWorker();
  OrtWorker(const OrtWorker&) = delete;
  OrtWorker& operator=(const OrtWorker&) = delete;

  // Sends `request` (an "id" is added) and returns the answer's body when it
  // says "ok". A worker that is not running is started first; one that dies
  // mid-call is restarted and the call retried once. Errors:
  // FAILED_PRECONDITION when node or onnxruntime-node is missing (the text
  // says to install node and run deploy/setup.sh); INTERNAL with the
  // worker's error or the tail of its stderr; DEADLINE_EXCEEDED after
  // call_timeout. Not thread-safe: the backend calls it under its lock.
  absl::StatusOr<nlohmann::json> Call(nlohmann::json request);

  // The worker's process id while it runs (tests), else -1.
  pid_t pid() const { return pid_; }

 private:
  absl::Status Start();
  void Stop();
  absl::StatusOr<nlohmann::json> CallOnce(const nlohmann::json& request);
  std::string StderrPath() const;
  std::string StderrTail() const;

  OrtWorkerOptions options_;
  pid_t pid_ = -1;
  int to_worker_ = -1;    // its stdin
  int from_worker_ = -1;  // its stdout
  std::string profile_dir_;  // ORT's profiles and the worker's stderr (StderrPath); removed with this object
  std::string pending_;  // bytes read past the last answer
  int64_t next_id_ = 1;
};

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_ORT_WORKER_H_
