#include "optimizer/optimizer_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "net/grpc_status.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/report_proto.h"

namespace taso::optimizer {

OptionDefaults ServerOptionDefaults() {
  OptionDefaults defaults;
  defaults.options.set_search(SEARCH_BACKTRACK);
  defaults.options.set_time_limit_s(60);
  defaults.options.set_min_gain(OptimizerOptions().min_gain);
  defaults.max_time_limit = absl::Minutes(10);
  defaults.max_model_bytes = 512LL << 20;
  return defaults;
}

grpc::Status OptimizerService::Optimize(grpc::ServerContext* context, const OptimizeRequest* request,
                                        OptimizeResponse* response) {
  const int64_t size = static_cast<int64_t>(request->model().size());
  if (size == 0) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the request carries no model bytes");
  if (size > limits_.defaults.max_model_bytes) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("model is ", size >> 20, " MiB, above this server's limit of ",
                                     limits_.defaults.max_model_bytes >> 20, " MiB (taso_optimizer --max_model_mb)"));
  }
  // A search holds a core for up to its time limit: wait for a slot (or be
  // refused at once when the queue is full) before anything is costed.
  const absl::Time call_deadline = absl::FromChrono(context->deadline());
  auto ticket = gate_.Enter(call_deadline, [context] { return context->IsCancelled(); });
  if (!ticket.ok()) return net::ToGrpc(ticket.status());
  auto options = ResolveOptimizeOptions(request->options(), limits_.defaults);
  if (!options.ok()) return net::ToGrpc(options.status());
  // Leave part of the caller's deadline for import, the check and export.
  if (call_deadline < absl::InfiniteFuture()) {
    const absl::Duration left = call_deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the deadline passed before the search started");
    }
    options->time_limit = std::min(options->time_limit, left / 2);
  }
  options->cancelled = [context] { return context->IsCancelled(); };
  const std::shared_ptr<const RuleSet> rules = rules_->Current();
  options->rules_provenance = rules->provenance;
  auto result = OptimizeOnnx(request->model(), rules->rewrites, *profiler_, *options);
  if (!result.ok()) return net::ToGrpc(result.status());
  if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away");
  response->set_model(std::move(result->model));
  *response->mutable_report() = ReportToProto(result->report);
  response->mutable_report()->set_cost_backend(options->backend);
  if (metrics_) metrics_->Record(response->report());
  return grpc::Status::OK;
}

}  // namespace taso::optimizer
