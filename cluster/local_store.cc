#include "cluster/local_store.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "cluster/processes.h"

namespace taso::cluster {

absl::StatusOr<LocalStore> StartLocalStore(const std::string& db_dir, const std::string& log,
                                           const std::vector<std::string>& extra_flags) {
  auto path = FindExecutable("taso_rules_db");
  if (!path.ok()) return path.status();
  const std::string port_file = db_dir + ".port";
  unlink(port_file.c_str());
  std::vector<std::string> args = {absl::StrCat("--db=", db_dir), "--listen=127.0.0.1:0",
                                   absl::StrCat("--port_file=", port_file)};
  args.insert(args.end(), extra_flags.begin(), extra_flags.end());
  auto pid = Spawn(*path, args, log);
  if (!pid.ok()) return pid.status();
  for (int waited = 0; waited < 60000; waited += 20) {
    if (auto address = LoopbackAddressFromPortFile(port_file)) return LocalStore{*address, *pid, log};
    if (auto code = PollExit(*pid)) {
      return absl::FailedPreconditionError(
          absl::StrCat("the local store exited (code ", *code, "):\n", TailFile(log, 5)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Stop(*pid, 9, 0);
  return absl::DeadlineExceededError(absl::StrCat("the local store did not start within 60 s; see ", log));
}

void StopLocalStore(LocalStore& store) {
  if (store.pid > 0) Stop(store.pid, SIGTERM, 10000);
  store.pid = -1;
}

}  // namespace taso::cluster
