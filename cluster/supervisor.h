// The worker processes a `taso` command runs on this machine (generators,
// verifiers): started from one executable, each with its own arguments and
// log file, reaped without blocking, restarted within a budget when they
// fail, and stopped together at the end.
#ifndef TASO_CLUSTER_SUPERVISOR_H_
#define TASO_CLUSTER_SUPERVISOR_H_

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace taso::cluster {

class Supervisor {
 public:
  // What to do about a child that exited.
  enum class Verdict {
    kFinished,  // exit 0: its work is done
    kRestart,   // failed, and the budget allows another start
    kRelaunch,  // ended itself with a relaunch code: start it again, uncharged
    kGiveUp,    // failed for good: a fatal code, or out of restarts
  };
  struct Exit {
    int child = 0;
    int code = 0;  // 128+signal when killed
    Verdict verdict = Verdict::kFinished;
  };

  // `fatal_codes` are exit codes that mean another start cannot help;
  // `relaunch_codes` ones a child ends with on purpose, so that its work goes
  // elsewhere (a verifier stalled inside a proof): it starts again without
  // using its restart budget.
  Supervisor(std::string executable, int max_restarts, std::set<int> fatal_codes = {},
             std::set<int> relaunch_codes = {});
  // Stops whatever still runs.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Adds a child running `executable args...` with stdout and stderr
  // appended to `log`, and starts it. Returns its index.
  absl::StatusOr<int> Start(std::vector<std::string> args, std::string log);
  // Starts an exited child again, charged to its restart budget.
  absl::Status Restart(int child);
  // Starts an exited child again without charging it (more work turned up).
  absl::Status Relaunch(int child);

  // The children that exited since the last call, in index order, with the
  // verdict on each. Does not block.
  std::vector<Exit> Reap();

  int running() const;
  // Every child exited 0 and was not started again since.
  bool all_finished() const;
  int restarts(int child) const { return children_[child].restarts; }
  int max_restarts() const { return max_restarts_; }
  const std::string& log(int child) const { return children_[child].log; }

  // Sends `signal` to every running child, waiting up to `timeout_ms` for
  // each before SIGKILL.
  void StopAll(int signal, int timeout_ms);

 private:
  struct Child {
    std::vector<std::string> args;
    std::string log;
    pid_t pid = -1;  // -1 once reaped
    int restarts = 0;
    bool finished = false;
  };

  absl::Status Launch(Child& child);

  std::string executable_;
  int max_restarts_;
  std::set<int> fatal_codes_;
  std::set<int> relaunch_codes_;
  std::vector<Child> children_;
};

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_SUPERVISOR_H_
