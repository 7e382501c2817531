#include "net/credentials.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "net/auth_processor.h"
#include "net/tokens.h"

namespace taso::net {
namespace {

std::mutex client_mutex;
std::shared_ptr<grpc::ChannelCredentials>& ClientCredentials() {
  static auto* credentials = new std::shared_ptr<grpc::ChannelCredentials>();
  return *credentials;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerSecurity& security) {
  if (!security.tls()) {
    if (!security.key.empty() || !security.client_ca.empty()) {
      return absl::InvalidArgumentError("--tls_key and --tls_client_ca need --tls_cert");
    }
    if (!security.tokens_file.empty()) {
      return absl::InvalidArgumentError(
          "--tokens_file needs TLS (--tls_cert and --tls_key): bearer tokens are not sent in the clear");
    }
    return grpc::InsecureServerCredentials();
  }
  if (security.key.empty()) return absl::InvalidArgumentError("--tls_cert needs --tls_key (its private key)");
  absl::StatusOr<std::string> cert = ReadSecretFile(security.cert, "--tls_cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadSecretFile(security.key, "--tls_key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!security.client_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadSecretFile(security.client_ca, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::SslServerCredentials(options);
  if (!credentials) return absl::InvalidArgumentError("gRPC refused the TLS certificate or key");
  if (!security.tokens_file.empty()) {
    absl::StatusOr<TokenTable> tokens = TokenTable::Load(security.tokens_file);
    if (!tokens.ok()) return tokens.status();
    credentials->SetAuthMetadataProcessor(std::make_shared<TokenAuthProcessor>(*std::move(tokens)));
  }
  return credentials;
}

absl::Status ConfigureClients(const ClientSecurity& security) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.ca.empty()) {
    if (!security.client_cert.empty() || !security.client_key.empty()) {
      return absl::InvalidArgumentError("a client certificate needs TLS: give the CA to trust (--tls_ca)");
    }
    if (!security.token_file.empty()) {
      return absl::InvalidArgumentError(
          "a token file needs TLS: give the CA to trust (--tls_ca); tokens are not sent in the clear");
    }
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions options;
    absl::StatusOr<std::string> ca = ReadSecretFile(security.ca, "--tls_ca");
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    if (security.client_cert.empty() != security.client_key.empty()) {
      return absl::InvalidArgumentError("give both the client certificate and its key, or neither");
    }
    if (!security.client_cert.empty()) {
      absl::StatusOr<std::string> cert = ReadSecretFile(security.client_cert, "--tls_client_cert");
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadSecretFile(security.client_key, "--tls_client_key");
      if (!key.ok()) return key.status();
      options.pem_cert_chain = *cert;
      options.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(options);
    if (!security.token_file.empty()) {
      absl::StatusOr<std::string> token = ReadTokenFile(security.token_file);
      if (!token.ok()) return token.status();
      // Sends "authorization: Bearer TOKEN" on every call.
      credentials = grpc::CompositeChannelCredentials(credentials, grpc::AccessTokenCredentials(*token));
    }
  }
  std::lock_guard<std::mutex> lock(client_mutex);
  ClientCredentials() = credentials;
  return absl::OkStatus();
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const grpc::ChannelArguments& args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  {
    std::lock_guard<std::mutex> lock(client_mutex);
    credentials = ClientCredentials();
  }
  if (!credentials) credentials = grpc::InsecureChannelCredentials();
  return grpc::CreateCustomChannel(address, credentials, args);
}

}  // namespace taso::net
