// A cluster's own certificate authority and tokens, for `taso up` to run
// TLS and tokens by default on one machine: a CA, a certificate per service
// it signed (for 127.0.0.1 and localhost), and a random token per role with
// the tokens file the servers read (digests only). Keys and tokens are
// written 0600 in a 0700 directory. Made once and reused: a cluster started
// again in the same directory keeps working with the tokens its users hold.
#ifndef TASO_NET_LOCAL_PKI_H_
#define TASO_NET_LOCAL_PKI_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::net {

struct LocalPki {
  std::string dir;
  std::string ca_cert;  // DIR/ca.pem: what clients trust (--tls_ca)
  struct Server {
    std::string cert, key;
  };
  std::map<std::string, Server> servers;         // by service name: DIR/NAME.pem, DIR/NAME.key
  std::string tokens_file;                       // DIR/tokens: ROLE SHA256 lines (--tokens_file)
  std::map<std::string, std::string> token_files;  // by role: DIR/ROLE.token
};

// The roles a local cluster makes a token for.
const std::vector<std::string>& LocalPkiRoles();

// Makes the CA, a certificate per name in `services` and a token per role
// under `dir`, or reuses them when every file is already there. The CA's key
// stays in `dir` (ca.key, 0600) so nothing else need hold it.
absl::StatusOr<LocalPki> EnsureLocalPki(const std::string& dir, const std::vector<std::string>& services);

}  // namespace taso::net

#endif  // TASO_NET_LOCAL_PKI_H_
