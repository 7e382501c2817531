#include "net/server_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(int32_t, max_threads, taso::net::ServerOptions().max_threads,
          "gRPC threads serving calls at most; a call beyond them is refused with RESOURCE_EXHAUSTED (0: no limit)");

namespace taso::net {

void ApplyServerFlags(ServerOptions* options) { options->max_threads = absl::GetFlag(FLAGS_max_threads); }

}  // namespace taso::net
