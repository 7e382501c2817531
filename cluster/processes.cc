#include "cluster/processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::cluster {
namespace {

std::string SelfPath() {
  char buffer[4096];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  buffer[n] = '\0';
  return buffer;
}

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

int DecodeWait(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace

absl::StatusOr<std::string> FindExecutable(const std::string& name) {
  const std::string package = "bin";
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("TASO_BIN_DIR")) candidates.push_back(absl::StrCat(dir, "/", name));
  const std::string self = SelfPath();
  const std::string self_dir = Dirname(self);
  candidates.push_back(absl::StrCat(self_dir, "/", name));
  candidates.push_back(absl::StrCat(self_dir, "/../", package, "/", name));
  candidates.push_back(absl::StrCat(self, ".runfiles/__main__/", package, "/", name));
  if (const char* runfiles = std::getenv("RUNFILES_DIR")) {
    candidates.push_back(absl::StrCat(runfiles, "/__main__/", package, "/", name));
  }
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return absl::NotFoundError(absl::StrCat("cannot find the ", name, " executable (looked in: ",
                                          absl::StrJoin(candidates, ", "),
                                          "); build it or set TASO_BIN_DIR"));
}

absl::StatusOr<pid_t> Spawn(const std::string& path, const std::vector<std::string>& args,
                            const std::string& log_path, bool detach) {
  int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return absl::PermissionDeniedError(absl::StrCat("cannot open ", log_path, ": ", strerror(errno)));
  std::vector<std::string> argv_storage = {path};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return absl::ResourceExhaustedError(absl::StrCat("fork failed: ", strerror(errno)));
  }
  if (pid == 0) {
    if (detach) setsid();
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(log, 1);
    dup2(log, 2);
    // Children get their own default signal mask.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(path.c_str(), argv.data());
    dprintf(2, "exec %s failed: %s\n", path.c_str(), strerror(errno));
    _exit(127);
  }
  close(log);
  return pid;
}

std::optional<int> PollExit(pid_t pid) {
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == pid) return DecodeWait(status);
  if (r < 0) return 255;
  return std::nullopt;
}

int Stop(pid_t pid, int signal, int timeout_ms) {
  kill(pid, signal);
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (auto code = PollExit(pid)) return *code;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return DecodeWait(status);
}

std::optional<std::string> LoopbackAddressFromPortFile(const std::string& path) {
  int port = 0;
  std::ifstream in(path);
  if (in >> port && port > 0) return absl::StrCat("127.0.0.1:", port);
  return std::nullopt;
}

std::string TailFile(const std::string& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  return absl::StrJoin(tail, "\n");
}

absl::StatusOr<std::string> MakeLogDir(const std::string& db) {
  const std::string logs = db + "/logs";
  std::error_code error;
  std::filesystem::create_directories(logs, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat("cannot create ", logs, ": ", error.message()));
  return logs;
}

}  // namespace taso::cluster
