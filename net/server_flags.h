// The serving limits every taso service binary shares, defined once:
//   --max_threads N   gRPC threads serving calls at most (a call beyond them
//                     is RESOURCE_EXHAUSTED); 0: gRPC's own (unbounded)
#ifndef TASO_NET_SERVER_FLAGS_H_
#define TASO_NET_SERVER_FLAGS_H_

#include "net/server.h"

namespace taso::net {

// Fills options->max_threads from the flag.
void ApplyServerFlags(ServerOptions* options);

}  // namespace taso::net

#endif  // TASO_NET_SERVER_FLAGS_H_
