// What a caller of the profiler holds: the same interface whether the
// profiler runs in this process (the optimizer's embedded mode) or as a
// taso_profiler server reached over gRPC. Only the interface: it is what the
// optimizer may see of the profiler (tools/layers.bzl); the ways to get one
// are in open_client.h.
#ifndef TASO_COSTS_CLIENT_H_
#define TASO_COSTS_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

class ProfilerClient {
 public:
  virtual ~ProfilerClient() = default;
  virtual absl::StatusOr<MeasureResponse> MeasureBatch(const MeasureRequest& request) = 0;
  // Whole graphs run end to end; see MeasureGraphRequest. Both real clients
  // implement it; a client that cannot (a test double) says so, and callers
  // treat UNIMPLEMENTED as "cannot run whole graphs".
  virtual absl::StatusOr<MeasureGraphResponse> MeasureGraph(const MeasureGraphRequest& request) {
    (void)request;
    return absl::UnimplementedError(absl::StrCat(Describe(), " does not measure whole graphs"));
  }
  virtual absl::StatusOr<ListCacheResponse> ListCache(const ListCacheRequest& request) = 0;
  virtual absl::StatusOr<InvalidateCacheResponse> InvalidateCache(const InvalidateCacheRequest& request) = 0;
  // "embedded profiler" or "taso_profiler at 127.0.0.1:7072", for messages.
  virtual std::string Describe() const = 0;
};

}  // namespace taso::profiler

#endif  // TASO_COSTS_CLIENT_H_
