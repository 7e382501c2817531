#include "net/tokens.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace taso::net {

absl::StatusOr<TokenTable> TokenTable::Parse(absl::string_view text, absl::string_view origin) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto where = [&] { return absl::StrCat(origin, ":", line_number, ": "); };
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), "expected 'ROLE SHA256-HEX' (digest of the token: printf %s TOKEN | sha256sum)"));
    }
    absl::StatusOr<Role> role = ParseRole(fields[0]);
    if (!role.ok()) return absl::InvalidArgumentError(absl::StrCat(where(), role.status().message()));
    std::string digest = absl::AsciiStrToLower(fields[1]);
    bool hex = digest.size() == 64;
    for (char c : digest) hex = hex && absl::ascii_isxdigit(c);
    if (!hex) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), "the second field must be the token's SHA-256 as 64 hex digits, not the token itself "
                   "(printf %s TOKEN | sha256sum)"));
    }
    if (!table.roles_by_digest_.emplace(digest, *role).second) {
      return absl::InvalidArgumentError(absl::StrCat(where(), "this token digest is listed twice"));
    }
  }
  if (table.roles_by_digest_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": no tokens; omit the tokens file to turn authentication off"));
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSecretFile(path, "--tokens_file");
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

std::optional<Role> TokenTable::RoleOf(absl::string_view token) const {
  auto it = roles_by_digest_.find(Sha256Hex(token));
  if (it == roles_by_digest_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path, " (given as ", flag, ")"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSecretFile(path, "the token file");
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " is empty: it must hold the bearer token"));
  return token;
}

}  // namespace taso::net
