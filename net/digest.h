// SHA-256 in lowercase hex, for content identities users can recompute with
// sha256sum: token digests, and the model and rule-set digests in reports.
#ifndef TASO_NET_DIGEST_H_
#define TASO_NET_DIGEST_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taso::net {

std::string Sha256Hex(absl::string_view text);
// The same of a file's bytes, read a block at a time (a model's data file
// can be larger than memory allows twice). NotFound when it cannot be opened.
absl::StatusOr<std::string> FileSha256Hex(const std::string& path);

}  // namespace taso::net

#endif  // TASO_NET_DIGEST_H_
