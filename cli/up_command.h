// `taso up | status | down [DIR]`: a whole local cluster (stores, profiler,
// optimizer, verifiers) as detached processes on loopback, recorded in
// DIR/cluster.json so later commands find, check and stop them.
#ifndef TASO_CLI_UP_COMMAND_H_
#define TASO_CLI_UP_COMMAND_H_

#include <ostream>
#include <string>

#include "net/credentials.h"

namespace taso::cli {

struct ClusterOptions {
  std::string dir = "taso-cluster";
  int stores = 1;
  int verifiers = 1;
  std::string rules;  // optimizer rules file; empty: the rules in the stores
  // Given to every server; tokens need TLS (the servers refuse otherwise).
  net::ServerSecurity server;
  // What the servers that are clients too (optimizer, verifiers) use to
  // reach the stores and the profiler: the CA to trust, an mTLS identity.
  net::ClientSecurity client;
  // With a tokens file: the optimizer's token (role optimize: reads rules,
  // measures costs) and the verifiers' token (role worker: leases, reports).
  std::string optimizer_token_file;
  std::string worker_token_file;
  int startup_timeout_s = 60;
  int stop_timeout_s = 30;
  bool json = false;
};

int RunUp(const ClusterOptions& options, std::ostream& out, std::ostream& err);
int RunStatus(const ClusterOptions& options, std::ostream& out, std::ostream& err);
int RunDown(const ClusterOptions& options, std::ostream& out, std::ostream& err);
// `taso health ADDRESS`: the server's gRPC health check, over TLS when the
// client flags say so (a Kubernetes exec probe for a TLS server, which
// kubelet's own gRPC probe cannot reach). 0 SERVING, 1 otherwise.
int RunHealth(const std::string& address, int timeout_s, std::ostream& out);

}  // namespace taso::cli

#endif  // TASO_CLI_UP_COMMAND_H_
