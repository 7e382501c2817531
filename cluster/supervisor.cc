#include "cluster/supervisor.h"

#include <signal.h>

#include <utility>

#include "cluster/processes.h"

namespace taso::cluster {

Supervisor::Supervisor(std::string executable, int max_restarts, std::set<int> fatal_codes,
                       std::set<int> relaunch_codes)
    : executable_(std::move(executable)),
      max_restarts_(max_restarts),
      fatal_codes_(std::move(fatal_codes)),
      relaunch_codes_(std::move(relaunch_codes)) {}

Supervisor::~Supervisor() { StopAll(SIGTERM, 2000); }

absl::Status Supervisor::Launch(Child& child) {
  auto pid = Spawn(executable_, child.args, child.log);
  if (!pid.ok()) return pid.status();
  child.pid = *pid;
  child.finished = false;
  return absl::OkStatus();
}

absl::StatusOr<int> Supervisor::Start(std::vector<std::string> args, std::string log) {
  Child child;
  child.args = std::move(args);
  child.log = std::move(log);
  if (absl::Status s = Launch(child); !s.ok()) return s;
  children_.push_back(std::move(child));
  return static_cast<int>(children_.size()) - 1;
}

absl::Status Supervisor::Restart(int child) {
  ++children_[child].restarts;
  return Launch(children_[child]);
}

absl::Status Supervisor::Relaunch(int child) { return Launch(children_[child]); }

std::vector<Supervisor::Exit> Supervisor::Reap() {
  std::vector<Exit> exits;
  for (size_t i = 0; i < children_.size(); ++i) {
    Child& c = children_[i];
    if (c.pid < 0) continue;
    auto code = PollExit(c.pid);
    if (!code) continue;
    c.pid = -1;
    Exit exit;
    exit.child = static_cast<int>(i);
    exit.code = *code;
    if (*code == 0) {
      c.finished = true;
      exit.verdict = Verdict::kFinished;
    } else if (relaunch_codes_.count(*code) > 0) {
      exit.verdict = Verdict::kRelaunch;
    } else if (fatal_codes_.count(*code) > 0 || c.restarts >= max_restarts_) {
      exit.verdict = Verdict::kGiveUp;
    } else {
      exit.verdict = Verdict::kRestart;
    }
    exits.push_back(exit);
  }
  return exits;
}

int Supervisor::running() const {
  int n = 0;
  for (const Child& c : children_) n += c.pid > 0;
  return n;
}

bool Supervisor::all_finished() const {
  for (const Child& c : children_) {
    if (!c.finished) return false;
  }
  return true;
}

void Supervisor::StopAll(int signal, int timeout_ms) {
  for (Child& c : children_) {
    if (c.pid > 0) Stop(c.pid, signal, timeout_ms);
    c.pid = -1;
  }
}

}  // namespace taso::cluster
