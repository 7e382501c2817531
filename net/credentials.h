// TLS and bearer tokens for every taso server and client. Default is
// plaintext (fine on loopback, what tests and a laptop use); a deployment
// gives servers a certificate and, to turn authentication on, a tokens file
// (net/tokens.h), and gives clients the CA to trust and a token file.
#ifndef TASO_NET_CREDENTIALS_H_
#define TASO_NET_CREDENTIALS_H_

#include <memory>
#include <string>

#include "net/certificate_files.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace taso::net {

// Paths, as the flags give them; all empty means plaintext without auth.
struct ServerSecurity {
  std::string cert;       // PEM certificate chain (--tls_cert)
  std::string key;        // PEM private key (--tls_key)
  std::string client_ca;  // if set, clients must present a cert it signed (mTLS)
  std::string tokens_file;  // if set, every call but health needs a token
  // How often the certificate, key and client CA files are read again, so a
  // renewed certificate (cert-manager rewrites its Secret's files) is served
  // without a restart (--tls_reload_s).
  int reload_seconds = 60;
  // Where the checked copies go (certificate_files.h); the binaries hand in
  // MakePrivateTempDir so a killed server's copies of the key are removed.
  PrivateDirMaker make_private_dir = nullptr;
  // --insecure: serve an address off loopback without TLS and tokens anyway
  // (a private network the operator vouches for); refused otherwise.
  bool insecure = false;
  bool tls() const { return !cert.empty(); }
  // TLS and tokens: what a server off loopback needs unless `insecure`.
  bool locked() const { return tls() && !tokens_file.empty(); }
};

struct ClientSecurity {
  std::string ca;           // PEM CA to trust; set means TLS (--tls_ca)
  std::string client_cert;  // for mTLS (--tls_client_cert)
  std::string client_key;   // (--tls_client_key)
  std::string token_file;   // bearer token (--token_file); needs TLS
};

// The credentials a server listens with, and with TLS the checked copies
// of its certificate files that keep them current (net/certificate_files.h):
// keep both until the server has shut down.
struct ServingCredentials {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::unique_ptr<CertificateFiles> certificate_files;  // null in plaintext
};

// Reads the files and builds the credentials; errors name the flag to fix.
absl::StatusOr<ServingCredentials> MakeServerCredentials(const ServerSecurity& security);

// Sets how every later NewChannel connects (process-wide: a binary has one
// identity). Call once from main before any client starts; without it,
// channels are plaintext.
absl::Status ConfigureClients(const ClientSecurity& security);

// THE way a taso client opens a channel to a taso server.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          const grpc::ChannelArguments& args = grpc::ChannelArguments());

}  // namespace taso::net

#endif  // TASO_NET_CREDENTIALS_H_
