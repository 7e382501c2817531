#include "net/security_flags.h"

#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, tls_cert, "", "server: PEM certificate chain; turns TLS on");
ABSL_FLAG(std::string, tls_key, "", "server: PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "", "server: require client certificates signed by this CA (mTLS)");
ABSL_FLAG(int32_t, tls_reload_s, taso::net::ServerSecurity().reload_seconds,
          "server: read --tls_cert, --tls_key and --tls_client_ca again this often (seconds), so a renewed "
          "certificate is served without a restart");
ABSL_FLAG(std::string, tokens_file, "",
          "server: 'ROLE SHA256-OF-TOKEN' lines; every call but health checks then needs a bearer token "
          "(needs TLS). Empty: no authentication");
ABSL_FLAG(bool, insecure, false,
          "server: serve an address off loopback without TLS and tokens (every caller would be admin); without it "
          "such a server refuses to start");
ABSL_FLAG(std::string, tls_ca, "", "client: PEM CA to trust; connect with TLS");
ABSL_FLAG(std::string, tls_client_cert, "", "client: PEM certificate for servers that require mTLS");
ABSL_FLAG(std::string, tls_client_key, "", "client: private key of --tls_client_cert");
ABSL_FLAG(std::string, token_file, "", "client: file holding the bearer token to send (needs --tls_ca)");

namespace taso::net {

ServerSecurity ServerSecurityFromFlags() {
  ServerSecurity s;
  s.cert = absl::GetFlag(FLAGS_tls_cert);
  s.key = absl::GetFlag(FLAGS_tls_key);
  s.client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  s.tokens_file = absl::GetFlag(FLAGS_tokens_file);
  s.reload_seconds = absl::GetFlag(FLAGS_tls_reload_s);
  s.insecure = absl::GetFlag(FLAGS_insecure);
  return s;
}

ClientSecurity ClientSecurityFromFlags() {
  auto flag_or_env = [](const absl::Flag<std::string>& flag, const char* name) {
    std::string value = absl::GetFlag(flag);
    if (!value.empty()) return value;
    const char* env = std::getenv(name);
    return std::string(env ? env : "");
  };
  ClientSecurity s;
  s.ca = flag_or_env(FLAGS_tls_ca, "TASO_TLS_CA");
  s.client_cert = flag_or_env(FLAGS_tls_client_cert, "TASO_TLS_CLIENT_CERT");
  s.client_key = flag_or_env(FLAGS_tls_client_key, "TASO_TLS_CLIENT_KEY");
  s.token_file = flag_or_env(FLAGS_token_file, "TASO_TOKEN_FILE");
  return s;
}

absl::Status ConfigureClientsFromFlags() { return ConfigureClients(ClientSecurityFromFlags()); }

}  // namespace taso::net
