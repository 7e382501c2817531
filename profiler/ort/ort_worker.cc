#include "profiler/ort/ort_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/scratch_dir.h"

extern char** environ;

namespace taso::profiler {
namespace {

constexpr char kInstallHint[] = "install node and run deploy/setup.sh (npm ci in profiler/ort)";

std::string SelfPath() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, n) : std::string();
}

bool IsFile(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

}  // namespace

absl::StatusOr<std::string> FindOrtWorker() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TASO_ORT_WORKER"); env && *env) candidates.push_back(env);
  const std::string self = SelfPath();
  const std::string self_dir = self.substr(0, self.rfind('/'));
  for (const char* workspace : {"__main__", "taso"}) {
    candidates.push_back(absl::StrCat(self, ".runfiles/", workspace, "/profiler/ort/worker.js"));
    if (const char* runfiles = std::getenv("RUNFILES_DIR")) {
      candidates.push_back(absl::StrCat(runfiles, "/", workspace, "/profiler/ort/worker.js"));
    }
  }
  // A binary of another package beside its runfiles-less copy (bazel-bin/cli/taso).
  candidates.push_back(absl::StrCat(self_dir, "/../profiler/ort/worker.js"));
  // The Debian package (deploy/package.sh): /usr/bin/taso, /usr/lib/taso/ort/worker.js.
  candidates.push_back(absl::StrCat(self_dir, "/../lib/taso/ort/worker.js"));
  for (const std::string& c : candidates) {
    if (IsFile(c)) return c;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot find the ONNX Runtime worker profiler/ort/worker.js (looked in: ", absl::StrJoin(candidates, ", "),
      "); pass --ort_worker or set TASO_ORT_WORKER to the repository's profiler/ort/worker.js, and ", kInstallHint));
}

OrtWorker::~OrtWorker() {
  Stop();
  std::error_code ignored;
  if (!profile_dir_.empty()) std::filesystem::remove_all(profile_dir_, ignored);
}

absl::Status OrtWorker::Start() {
  std::string script = options_.script;
  if (script.empty()) {
    auto found = FindOrtWorker();
    if (!found.ok()) return found.status();
    script = *found;
  }
  if (!IsFile(script)) {
    return absl::FailedPreconditionError(absl::StrCat("the ONNX Runtime worker ", script, " does not exist; ",
                                                      kInstallHint));
  }
  if (profile_dir_.empty()) {
    // ORT's profiles and the worker's stderr, in one directory that a later
    // process removes if this one is killed (MakePrivateTempDir).
    auto dir = MakePrivateTempDir("ort-worker");
    if (!dir.ok()) return dir.status();
    profile_dir_ = *std::move(dir);
  }
  // One socket for the worker's stdin and stdout: writes to a dead worker
  // then fail with EPIPE (MSG_NOSIGNAL) instead of killing us with SIGPIPE.
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], 1);
  const std::string stderr_path = StderrPath();
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> argv_storage = {options_.node, script, profile_dir_};
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, options_.node.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(sockets[1]);
  if (rc != 0) {
    close(sockets[0]);
    if (rc == ENOENT || rc == EACCES) {
      return absl::FailedPreconditionError(absl::StrCat("cannot run '", options_.node, "' (", strerror(rc),
                                                        "): the ort backend needs node; ", kInstallHint));
    }
    return absl::InternalError(absl::StrCat("cannot start ", options_.node, " ", script, ": ", strerror(rc)));
  }
  pid_ = pid;
  to_worker_ = from_worker_ = sockets[0];
  pending_.clear();
  return absl::OkStatus();
}

void OrtWorker::Stop() {
  if (to_worker_ >= 0) close(to_worker_);  // the worker exits when its stdin closes
  to_worker_ = from_worker_ = -1;
  if (pid_ <= 0) return;
  int status = 0;
  for (int i = 0; i < 100; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string OrtWorker::StderrPath() const { return absl::StrCat(profile_dir_, "/worker.stderr"); }

std::string OrtWorker::StderrTail() const {
  std::ifstream in(StderrPath());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  const size_t from = lines.size() > 3 ? lines.size() - 3 : 0;
  std::vector<std::string> tail(lines.begin() + from, lines.end());
  return tail.empty() ? "nothing on its stderr" : absl::StrCat("its stderr ends: ", absl::StrJoin(tail, " | "));
}

absl::StatusOr<nlohmann::json> OrtWorker::CallOnce(const nlohmann::json& request) {
  const std::string line = request.dump() + "\n";
  for (size_t sent = 0; sent < line.size();) {
    const ssize_t n = send(to_worker_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError(absl::StrCat("the ORT worker is gone (", strerror(errno), ")"));
    sent += n;
  }
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(options_.call_timeout);
  const int64_t id = request["id"].get<int64_t>();
  for (;;) {
    for (size_t eol; (eol = pending_.find('\n')) != std::string::npos;) {
      const std::string answer = pending_.substr(0, eol);
      pending_.erase(0, eol + 1);
      nlohmann::json parsed = nlohmann::json::parse(answer, nullptr, /*allow_exceptions=*/false);
      // Anything that is not our answer (a library printing to stdout) is skipped.
      if (!parsed.is_object() || !parsed.contains("id") || parsed["id"] != id) continue;
      return parsed;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return absl::DeadlineExceededError(absl::StrCat("the ORT worker did not answer within ",
                                                      absl::FormatDuration(options_.call_timeout),
                                                      " (taso_profiler --ort_timeout_s); it was stopped"));
    }
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return absl::InternalError(absl::StrCat("poll: ", strerror(errno)));
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = read(from_worker_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the ORT worker exited");
    pending_.append(buffer, n);
  }
}

absl::StatusOr<nlohmann::json> OrtWorker::Call(nlohmann::json request) {
  request["id"] = next_id_++;
  absl::StatusOr<nlohmann::json> answer = absl::UnavailableError("not started");
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (pid_ <= 0) {
      if (absl::Status s = Start(); !s.ok()) return s;
    }
    answer = CallOnce(request);
    if (answer.ok()) break;
    const absl::Status failed = answer.status();
    Stop();  // dead, hung or out of step: the next call starts a fresh one
    if (failed.code() != absl::StatusCode::kUnavailable) return failed;
    answer = absl::InternalError(absl::StrCat(failed.message(), "; ", StderrTail()));
  }
  if (!answer.ok()) {
    return absl::InternalError(absl::StrCat("the ORT worker died twice in a row: ", answer.status().message()));
  }
  if (answer->value("ok", false)) return *answer;
  const std::string error = answer->value("error", std::string("the ORT worker gave no reason"));
  if (answer->value("unavailable", false)) return absl::FailedPreconditionError(error);
  return absl::InternalError(absl::StrCat("the ORT worker: ", error));
}

}  // namespace taso::profiler
