#include "profiler/profiler_service.h"

#include "net/grpc_status.h"

namespace taso::profiler {

namespace {

template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return net::ToGrpc(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ProfilerService::MeasureBatch(grpc::ServerContext* context, const MeasureRequest* request,
                                           MeasureResponse* response) {
  return Reply(profiler_->MeasureBatch(*request, [context] { return context->IsCancelled(); }), response);
}

grpc::Status ProfilerService::MeasureGraph(grpc::ServerContext* context, const MeasureGraphRequest* request,
                                           MeasureGraphResponse* response) {
  if (request->onnx_model_paths_size() > 0) {
    // Paths name files on the caller's machine, and a server must not open
    // whatever file a caller names.
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "MeasureGraph: onnx_model_paths are read only by a profiler in the caller's process; send the "
                        "models' bytes in onnx_models");
  }
  return Reply(profiler_->MeasureGraph(*request, [context] { return context->IsCancelled(); }), response);
}

grpc::Status ProfilerService::ListCache(grpc::ServerContext*, const ListCacheRequest* request,
                                        ListCacheResponse* response) {
  return Reply(profiler_->ListCache(*request), response);
}

grpc::Status ProfilerService::InvalidateCache(grpc::ServerContext*, const InvalidateCacheRequest* request,
                                              InvalidateCacheResponse* response) {
  return Reply(profiler_->InvalidateCache(*request), response);
}

}  // namespace taso::profiler
