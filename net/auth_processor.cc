#include "net/auth_processor.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "net/digest.h"

namespace taso::net {

grpc::Status TokenAuthProcessor::Check(absl::string_view method, absl::string_view authorization,
                                       std::optional<Role>* role) const {
  role->reset();
  std::optional<Role> needed = RequiredRole(method);
  absl::string_view token = authorization;
  bool bearer = absl::ConsumePrefix(&token, "Bearer ");
  if (bearer && !token.empty()) *role = tokens_.RoleOf(token);
  if (!needed) return grpc::Status::OK;  // open calls (health)
  if (authorization.empty()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat(method, " needs a bearer token with role ", RoleName(*needed),
                                     " (client: --token_file or TASO_TOKEN_FILE)"));
  }
  if (!bearer || !role->has_value()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "the bearer token is not in the server's tokens file");
  }
  if (!RoleAllows(**role, *needed)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, " needs role ", RoleName(*needed), "; this token has role ",
                                     RoleName(**role)));
  }
  return grpc::Status::OK;
}

grpc::Status TokenAuthProcessor::Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                                         OutputMetadata* consumed_auth_metadata,
                                         OutputMetadata* /*response_metadata*/) {
  auto value = [&](const char* key) {
    auto it = auth_metadata.find(key);
    return it == auth_metadata.end() ? absl::string_view() : absl::string_view(it->second.data(), it->second.size());
  };
  absl::string_view method = value(":path");
  absl::string_view authorization = value("authorization");
  std::optional<Role> role;
  grpc::Status status = Check(method, authorization, &role);
  if (!status.ok()) return status;
  if (!authorization.empty()) consumed_auth_metadata->insert({"authorization", std::string(authorization)});
  if (role) {
    context->AddProperty(kRoleProperty, RoleName(*role));
    absl::string_view token = authorization;
    absl::ConsumePrefix(&token, "Bearer ");
    context->AddProperty(kTokenProperty, Sha256Hex(token).substr(0, 12));
  }
  return grpc::Status::OK;
}

std::string CallerToken(const grpc::AuthContext& context) {
  for (const grpc::string_ref& value : context.FindPropertyValues(kTokenProperty)) {
    return std::string(value.data(), value.size());
  }
  return "";
}

}  // namespace taso::net
