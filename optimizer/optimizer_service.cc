#include "optimizer/optimizer_service.h"

#include <algorithm>

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

namespace {

grpc::Status CheckModelSize(const OptimizeRequest& request, int64_t max_model_bytes) {
  const int64_t size = static_cast<int64_t>(request.model().size());
  if (size == 0) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the request carries no model bytes");
  if (size > max_model_bytes) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("model is ", size >> 20, " MiB, above this server's limit of ",
                                     max_model_bytes >> 20, " MiB (taso_optimizer --max_model_mb)"));
  }
  return grpc::Status::OK;
}

}  // namespace

// A search holds a core for up to its time limit: a call waits for a slot
// (or is refused at once when the queue is full) before anything is costed.
absl::StatusOr<net::AdmissionGate::Ticket> OptimizerService::Admit(absl::Time deadline,
                                                                   const std::function<bool()>& cancelled) {
  return gate_.Enter(deadline, cancelled);
}

grpc::Status OptimizerService::RunAdmitted(const OptimizeRequest& request, OptimizeResponse* response,
                                           absl::Time deadline, const std::function<bool()>& cancelled) {
  if (grpc::Status s = CheckModelSize(request, limits_.defaults.max_model_bytes); !s.ok()) return s;
  auto options = ResolveOptimizeOptions(request.options(), limits_.defaults);
  if (!options.ok()) return net::ToGrpc(options.status());
  // Leave part of the caller's deadline for import, the check and export.
  if (deadline < absl::InfiniteFuture()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the deadline passed before the search started");
    }
    options->time_limit = std::min(options->time_limit, left / 2);
  }
  options->cancelled = cancelled;
  const std::shared_ptr<const RuleSet> rules = rules_->Current();
  options->rules_provenance = rules->provenance;
  auto result = OptimizeOnnx(request.model(), rules->rewrites, *profiler_, *options);
  if (!result.ok()) return net::ToGrpc(result.status());
  if (cancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away");
  response->set_model(std::move(result->model));
  *response->mutable_report() = ReportToProto(result->report);
  if (metrics_) metrics_->Record(response->report());
  return grpc::Status::OK;
}

}  // namespace taso::optimizer
