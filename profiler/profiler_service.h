// The Profiler gRPC service: a thin adapter over CostProfiler.
#ifndef TASO_PROFILER_PROFILER_SERVICE_H_
#define TASO_PROFILER_PROFILER_SERVICE_H_

#include "profiler/profiler.h"
#include "proto/profiler.grpc.pb.h"

namespace taso::profiler {

class ProfilerService final : public Profiler::Service {
 public:
  explicit ProfilerService(CostProfiler* profiler) : profiler_(profiler) {}

  grpc::Status MeasureBatch(grpc::ServerContext*, const MeasureRequest* request, MeasureResponse* response) override;
  grpc::Status MeasureGraph(grpc::ServerContext*, const MeasureGraphRequest* request,
                            MeasureGraphResponse* response) override;
  grpc::Status ListCache(grpc::ServerContext*, const ListCacheRequest* request, ListCacheResponse* response) override;
  grpc::Status InvalidateCache(grpc::ServerContext*, const InvalidateCacheRequest* request,
                               InvalidateCacheResponse* response) override;

 private:
  CostProfiler* profiler_;
};

}  // namespace taso::profiler

#endif  // TASO_PROFILER_PROFILER_SERVICE_H_
