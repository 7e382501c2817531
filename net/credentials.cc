#include "net/credentials.h"

#include <cstdio>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
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

absl::StatusOr<ServingCredentials> MakeServerCredentials(const ServerSecurity& security) {
  ServingCredentials serving;
  if (!security.tls()) {
    if (!security.key.empty() || !security.client_ca.empty()) {
      return absl::InvalidArgumentError("--tls_key and --tls_client_ca need --tls_cert");
    }
    if (!security.tokens_file.empty()) {
      return absl::InvalidArgumentError(
          "--tokens_file needs TLS (--tls_cert and --tls_key): bearer tokens are not sent in the clear");
    }
    serving.credentials = grpc::InsecureServerCredentials();
    return serving;
  }
  if (security.key.empty()) return absl::InvalidArgumentError("--tls_cert needs --tls_key (its private key)");
  auto files = CertificateFiles::Watch(
      {security.cert, security.key, security.client_ca, security.reload_seconds, security.make_private_dir},
      [](const std::string& line) { std::fprintf(stderr, "tls: %s\n", line.c_str()); });
  if (!files.ok()) return files.status();
  // gRPC re-reads the checked copies (each second: they change only when a
  // renewal passed the checks), so new connections get a renewed certificate.
  auto watcher = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      (*files)->key_path(), (*files)->cert_path(), (*files)->client_ca_path(), 1);
  grpc::experimental::TlsServerCredentialsOptions options(watcher);
  options.watch_identity_key_cert_pairs();
  if (security.client_ca.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  serving.credentials = grpc::experimental::TlsServerCredentials(options);
  if (!serving.credentials) return absl::InvalidArgumentError("gRPC refused the TLS certificate or key");
  if (!security.tokens_file.empty()) {
    absl::StatusOr<TokenTable> tokens = TokenTable::Load(security.tokens_file);
    if (!tokens.ok()) return tokens.status();
    serving.credentials->SetAuthMetadataProcessor(std::make_shared<TokenAuthProcessor>(*std::move(tokens)));
  }
  serving.certificate_files = *std::move(files);
  return serving;
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
