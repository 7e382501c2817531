// SHA-256 in lowercase hex, for content identities users can recompute with
// sha256sum: token digests, and the model and rule-set digests in reports.
#ifndef TASO_NET_DIGEST_H_
#define TASO_NET_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"

namespace taso::net {

std::string Sha256Hex(absl::string_view text);

}  // namespace taso::net

#endif  // TASO_NET_DIGEST_H_
