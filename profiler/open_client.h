// The ways to get a ProfilerClient: the profiler in this process, a
// taso_profiler server over gRPC, or whichever of the two a tool's flags ask
// for. Binaries and tests use this; libraries take a ProfilerClient.
#ifndef TASO_PROFILER_OPEN_CLIENT_H_
#define TASO_PROFILER_OPEN_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "costs/client.h"
#include "profiler/profiler.h"

namespace taso::profiler {

// Calls `profiler` directly; it must outlive the client.
std::unique_ptr<ProfilerClient> InProcessClient(CostProfiler* profiler);
// As above, owning the profiler.
std::unique_ptr<ProfilerClient> InProcessClient(std::unique_ptr<CostProfiler> profiler);

struct RemoteOptions {
  // How long to wait for the server to accept a connection.
  absl::Duration connect_timeout = absl::Seconds(10);
  // Deadline of each call; a cold batch on a slow device can take minutes.
  absl::Duration call_timeout = absl::Minutes(30);
  // A call that fails as Unavailable (the profiler restarting, a connection
  // reset) is made again for this long; every profiler call is idempotent.
  absl::Duration retry_for = absl::Seconds(30);
};

// A client of the taso_profiler at `address`. Unavailable (saying which
// address) when nothing answers there within the connect timeout.
absl::StatusOr<std::unique_ptr<ProfilerClient>> ConnectProfiler(const std::string& address,
                                                                const RemoteOptions& options = {});

// What a tool that offers both takes: the taso_profiler at `address`, or,
// when `address` is empty, a CostProfiler in this process made with
// `embedded` (then also stored in `*embedded_profiler` when given, for what
// only the local machine can answer). Unavailable when the server does not
// answer; CostProfiler::Create's error when the embedded one cannot start.
absl::StatusOr<std::unique_ptr<ProfilerClient>> OpenProfiler(const std::string& address,
                                                             const ProfilerOptions& embedded,
                                                             CostProfiler** embedded_profiler = nullptr);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_OPEN_CLIENT_H_
