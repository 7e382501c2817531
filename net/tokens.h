// The server's tokens file: which bearer tokens exist and the role each
// grants. The file holds SHA-256 digests, not tokens, so a copy of it (a
// backup, a mounted secret, a log of the config) lets nobody call the
// servers; a token is compared by its digest.
//
// Format, one token a line; blank lines and lines starting with # skipped:
//   ROLE SHA256-HEX       e.g.  worker 9f86d081884c7d65...
// Make a digest with: printf %s "$TOKEN" | sha256sum
#ifndef TASO_NET_TOKENS_H_
#define TASO_NET_TOKENS_H_

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "net/digest.h"
#include "net/roles.h"

namespace taso::net {

class TokenTable {
 public:
  // `origin` names the text in error messages (a file name).
  static absl::StatusOr<TokenTable> Parse(absl::string_view text, absl::string_view origin);
  static absl::StatusOr<TokenTable> Load(const std::string& path);

  // The role `token` grants, or nullopt for an unknown token.
  std::optional<Role> RoleOf(absl::string_view token) const;
  size_t size() const { return roles_by_digest_.size(); }

 private:
  absl::flat_hash_map<std::string, Role> roles_by_digest_;
};

// A client's token file: the token is the file's text without surrounding
// whitespace; empty is an error.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// A whole file's bytes, or NOT_FOUND naming the file and the flag.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path, absl::string_view flag);

}  // namespace taso::net

#endif  // TASO_NET_TOKENS_H_
