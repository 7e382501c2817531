// Who may call what: the roles a bearer token grants and the role each RPC
// needs. One table for every taso service, so a reviewer reads the whole
// policy in one place.
#ifndef TASO_NET_ROLES_H_
#define TASO_NET_ROLES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taso::net {

// read < worker < admin; optimize is beside worker: it may read and run
// optimizations (and the measurements they need) but not write rules.
enum class Role { kRead, kWorker, kOptimize, kAdmin };

absl::StatusOr<Role> ParseRole(absl::string_view name);
std::string RoleName(Role role);

// True when a token holding `held` may call an RPC that needs `needed`.
bool RoleAllows(Role held, Role needed);

// The role `method` ("/package.Service/Method", as on the wire) needs;
// nullopt for the calls that stay open (health checks). An RPC missing from
// the table needs admin, so a new write RPC is closed until it is classified.
std::optional<Role> RequiredRole(absl::string_view method);
// True when `method` has its own row in the table (not the admin default).
bool IsClassified(absl::string_view method);

}  // namespace taso::net

#endif  // TASO_NET_ROLES_H_
