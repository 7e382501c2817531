// The server-side token check: gRPC runs it on every call's metadata before
// the handler, so no handler repeats it. It reads "authorization: Bearer T",
// looks the token up, and refuses the call when the RPC needs a role the
// token does not grant. Runs only on TLS servers (gRPC applies an auth
// metadata processor to secure credentials alone, and a bearer token must
// not cross the network in the clear anyway).
#ifndef TASO_NET_AUTH_PROCESSOR_H_
#define TASO_NET_AUTH_PROCESSOR_H_

#include <memory>
#include <string>

#include "grpcpp/security/auth_metadata_processor.h"
#include "net/tokens.h"

namespace taso::net {

// The auth-context property that carries the caller's role to handlers.
inline constexpr char kRoleProperty[] = "taso_role";
// And who the caller is: the first 12 hex digits of its token's SHA-256 (the
// tokens file's digest), never the token itself.
inline constexpr char kTokenProperty[] = "taso_token";

// The caller's kTokenProperty, or empty on a server without tokens.
std::string CallerToken(const grpc::AuthContext& context);

class TokenAuthProcessor : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenAuthProcessor(TokenTable tokens) : tokens_(std::move(tokens)) {}

  // Cheap (a hash and a map lookup): run on the transport's thread.
  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata, OutputMetadata* response_metadata) override;

  // The decision itself, apart from gRPC's plumbing (what the tests call):
  // `method` is the ":path", `authorization` the header's value ("" if none).
  grpc::Status Check(absl::string_view method, absl::string_view authorization,
                     std::optional<Role>* role) const;

 private:
  TokenTable tokens_;
};

}  // namespace taso::net

#endif  // TASO_NET_AUTH_PROCESSOR_H_
