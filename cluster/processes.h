// Child processes for `taso generate` and `taso verify`: find a sibling
// executable, start it with its output going to a log file, and reap it.
#ifndef TASO_CLUSTER_PROCESSES_H_
#define TASO_CLUSTER_PROCESSES_H_

#include <sys/types.h>

#include <optional>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::cluster {

// Looks for the service binary `name` (built in //bin) in $TASO_BIN_DIR, next
// to this executable, in the Bazel output tree and in this executable's runfiles.
absl::StatusOr<std::string> FindExecutable(const std::string& name);

// Starts `path args...` with stdin from /dev/null and stdout and stderr
// appended to `log_path`. `detach`: in a session of its own, so it outlives
// this command and the terminal's Ctrl-C (`taso up`).
absl::StatusOr<pid_t> Spawn(const std::string& path, const std::vector<std::string>& args,
                            const std::string& log_path, bool detach = false);

// Non-blocking: the exit code if `pid` has exited (128+signal if killed).
std::optional<int> PollExit(pid_t pid);
// Sends `signal` and waits up to `timeout_ms`, then SIGKILL; returns the exit code.
int Stop(pid_t pid, int signal, int timeout_ms);

// "127.0.0.1:PORT" once a server started with --port_file=`path` has
// written its port there; nullopt before.
std::optional<std::string> LoopbackAddressFromPortFile(const std::string& path);

// The last `lines` lines of a file, for error messages.
std::string TailFile(const std::string& path, int lines);

// `db`/logs, created if missing: where the processes a command starts write.
absl::StatusOr<std::string> MakeLogDir(const std::string& db);

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_PROCESSES_H_
