// The observability flags, defined once for every taso service and worker
// binary that links this:
//   --metrics_listen HOST:PORT   serve Prometheus text on GET /metrics (empty: off)
//   --log_requests               one stderr line per RPC (servers; default true)
#ifndef TASO_NET_METRICS_FLAGS_H_
#define TASO_NET_METRICS_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "net/metrics.h"
#include "net/metrics_http.h"
#include "net/server.h"

namespace taso::net {

// Fills options->metrics_listen and options->log_requests from the flags.
void ApplyMetricsFlags(ServerOptions* options);

// For binaries that are not servers (the workers): serves `registry` when
// --metrics_listen is set, else returns null.
absl::StatusOr<std::unique_ptr<MetricsHttpServer>> StartMetricsFromFlags(const MetricsRegistry* registry,
                                                                         const std::string& name);

}  // namespace taso::net

#endif  // TASO_NET_METRICS_FLAGS_H_
