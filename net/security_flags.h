// The TLS and token flags, defined once for every taso binary that links
// this (servers and clients alike; the optimizer is both), and the same
// settings from the environment for the `taso` CLI.
//   servers: --tls_cert --tls_key [--tls_client_ca] [--tokens_file]
//   clients: --tls_ca [--tls_client_cert --tls_client_key] [--token_file]
//   (the `taso` CLI spells them --tls-ca etc.; clients also read
//   TASO_TLS_CA, TASO_TLS_CLIENT_CERT, TASO_TLS_CLIENT_KEY, TASO_TOKEN_FILE)
#ifndef TASO_NET_SECURITY_FLAGS_H_
#define TASO_NET_SECURITY_FLAGS_H_

#include "absl/status/status.h"
#include "net/credentials.h"

namespace taso::net {

ServerSecurity ServerSecurityFromFlags();

// The client flags (call after parsing them); an empty flag falls back to
// its environment variable (TASO_TLS_CA, TASO_TLS_CLIENT_CERT,
// TASO_TLS_CLIENT_KEY, TASO_TOKEN_FILE).
ClientSecurity ClientSecurityFromFlags();

// Configures NewChannel from ClientSecurityFromFlags().
absl::Status ConfigureClientsFromFlags();

}  // namespace taso::net

#endif  // TASO_NET_SECURITY_FLAGS_H_
