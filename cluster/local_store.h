// Starting a local taso_rules_db process on a database directory and waiting
// until it serves: shared by `taso generate`, `taso verify` and `taso rules`.
#ifndef TASO_CLUSTER_LOCAL_STORE_H_
#define TASO_CLUSTER_LOCAL_STORE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::cluster {

struct LocalStore {
  std::string address;  // 127.0.0.1:PORT
  pid_t pid = -1;
  std::string log;
};

// Starts `taso_rules_db --db=<db_dir>` on a free loopback port, its output
// appended to `log`, and waits (up to 60 s) for it to serve. `extra_flags`
// are passed through.
absl::StatusOr<LocalStore> StartLocalStore(const std::string& db_dir, const std::string& log,
                                           const std::vector<std::string>& extra_flags = {});

// Stops a store StartLocalStore started (SIGTERM, up to 10 s to flush);
// nothing when it runs elsewhere (pid -1) or was stopped already.
void StopLocalStore(LocalStore& store);

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_LOCAL_STORE_H_
