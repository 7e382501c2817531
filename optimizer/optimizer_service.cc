#include "optimizer/optimizer_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "net/grpc_status.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/report_proto.h"

namespace taso::optimizer {

EqsatOptions EqsatOptionsFor(const OptimizeOptions& in, const ServiceLimits& limits) {
  EqsatOptions eqsat;
  eqsat.backoff_scheduler = in.eqsat_backoff() == EQSAT_BACKOFF_ON    ? true
                            : in.eqsat_backoff() == EQSAT_BACKOFF_OFF ? false
                                                                      : limits.default_eqsat_backoff;
  eqsat.max_matches_per_rule = in.eqsat_match_limit() > 0 ? in.eqsat_match_limit() : limits.default_eqsat_match_limit;
  eqsat.backoff_ban_length = in.eqsat_ban_length() > 0 ? in.eqsat_ban_length() : limits.default_eqsat_ban_length;
  eqsat.ilp_memory_mb = limits.ilp_memory_mb;
  return eqsat;
}

grpc::Status OptimizerService::Optimize(grpc::ServerContext* context, const OptimizeRequest* request,
                                        OptimizeResponse* response) {
  const int64_t size = static_cast<int64_t>(request->model().size());
  if (size == 0) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the request carries no model bytes");
  if (size > limits_.max_model_bytes) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("model is ", size >> 20, " MiB, above this server's limit of ",
                                     limits_.max_model_bytes >> 20, " MiB (taso_optimizer --max_model_mb)"));
  }
  // A search holds a core for up to its time limit: wait for a slot (or be
  // refused at once when the queue is full) before anything is costed.
  const absl::Time call_deadline = absl::FromChrono(context->deadline());
  auto ticket = gate_.Enter(call_deadline, [context] { return context->IsCancelled(); });
  if (!ticket.ok()) return net::ToGrpc(ticket.status());
  const OptimizeOptions& in = request->options();  // the wire message
  OptimizerOptions options;
  options.search = in.search() == SEARCH_EQSAT       ? SearchKind::kEqsat
                   : in.search() == SEARCH_BACKTRACK ? SearchKind::kBacktrack
                                                     : limits_.default_search;
  if (in.time_limit_s() < 0 || in.alpha() < 0 || in.budget() < 0 || in.eqsat_match_limit() < 0 ||
      in.eqsat_ban_length() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "time_limit_s, alpha, budget, eqsat_match_limit and eqsat_ban_length must not be negative");
  }
  options.eqsat = EqsatOptionsFor(in, limits_);
  options.check.max_bytes = limits_.max_check_bytes;
  absl::Duration limit = in.time_limit_s() > 0 ? absl::Seconds(in.time_limit_s()) : limits_.default_time_limit;
  limit = std::min(limit, limits_.max_time_limit);
  // Leave part of the caller's deadline for import, the check and export.
  if (call_deadline < absl::InfiniteFuture()) {
    const absl::Duration left = call_deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the deadline passed before the search started");
    }
    limit = std::min(limit, left / 2);
  }
  options.time_limit = limit;
  if (in.alpha() > 0) options.backtrack.alpha = in.alpha();
  if (in.budget() > 0) options.backtrack.budget = static_cast<int>(std::min<int64_t>(in.budget(), 1 << 30));
  options.backend = in.cost_backend();
  options.check.seed = in.seed();
  options.measure = limits_.measure && !in.skip_measure();
  options.measure_tolerance = limits_.measure_tolerance;
  options.measure_backend = in.measure_backend();
  options.min_gain = in.has_min_gain() ? in.min_gain() : limits_.min_gain;
  options.export_baseline = in.export_baseline();
  options.import.max_model_bytes = limits_.max_model_bytes;
  auto input_shapes = ParseInputShapes({in.input_shapes().begin(), in.input_shapes().end()});
  if (!input_shapes.ok()) return net::ToGrpc(input_shapes.status());
  options.import.input_shapes = *std::move(input_shapes);
  options.cancelled = [context] { return context->IsCancelled(); };
  const std::shared_ptr<const RuleSet> rules = rules_->Current();
  options.rules_provenance = rules->provenance;
  auto result = OptimizeOnnx(request->model(), rules->rewrites, *profiler_, options);
  if (!result.ok()) return net::ToGrpc(result.status());
  if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away");
  response->set_model(std::move(result->model));
  *response->mutable_report() = ReportToProto(result->report);
  response->mutable_report()->set_cost_backend(options.backend);
  if (metrics_) metrics_->Record(response->report());
  return grpc::Status::OK;
}

}  // namespace taso::optimizer
