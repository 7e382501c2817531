// The Optimizer gRPC service: a thin adapter over OptimizeOnnx, with the
// server's limits (model size, search time) and the caller's deadline.
#ifndef TASO_OPTIMIZER_OPTIMIZER_SERVICE_H_
#define TASO_OPTIMIZER_OPTIMIZER_SERVICE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "net/admission.h"
#include "optimizer/optimize.h"
#include "optimizer/served_rules.h"
#include "optimizer/service_metrics.h"
#include "costs/client.h"
#include "proto/optimizer.grpc.pb.h"

namespace taso::optimizer {

struct ServiceLimits {
  int64_t max_model_bytes = 512LL << 20;
  absl::Duration default_time_limit = absl::Seconds(60);
  absl::Duration max_time_limit = absl::Minutes(10);
  SearchKind default_search = SearchKind::kBacktrack;
  // EQSAT's rule scheduling where a request leaves it unset.
  bool default_eqsat_backoff = EqsatOptions().backoff_scheduler;
  int default_eqsat_match_limit = EqsatOptions().max_matches_per_rule;
  int default_eqsat_ban_length = EqsatOptions().backoff_ban_length;
  // Never slower (OptimizerOptions::measure) unless a request skips it.
  bool measure = true;
  // Searches running at once, and calls waiting for one to finish; beyond
  // both a call is refused with RESOURCE_EXHAUSTED.
  int max_concurrent = 2;
  int max_queued = 16;
  double measure_tolerance = 0.01;  // OptimizerOptions::measure_tolerance
  double min_gain = 0.01;           // OptimizerOptions::min_gain, when a request leaves it unset
  int64_t ilp_memory_mb = EqsatOptions().ilp_memory_mb;
  // A model whose tensors take more than this at its declared shapes is
  // refused with INVALID_ARGUMENT (its result could not be checked).
  int64_t max_check_bytes = NumericCheckOptions().max_bytes;
};

// EQSAT's rule scheduling for a request: what it sets, the server's
// defaults for what it leaves unset (its caller has refused negative values).
EqsatOptions EqsatOptionsFor(const OptimizeOptions& request, const ServiceLimits& limits);

class OptimizerService final : public Optimizer::Service {
 public:
  // `rules` and `profiler` must outlive the service; both are shared by
  // concurrent requests (the profiler clients are thread-safe).
  OptimizerService(ServedRules* rules, profiler::ProfilerClient* profiler, ServiceLimits limits)
      : rules_(rules), profiler_(profiler), limits_(limits), gate_(limits.max_concurrent, limits.max_queued) {}

  grpc::Status Optimize(grpc::ServerContext* context, const OptimizeRequest* request,
                        OptimizeResponse* response) override;

  // Exports the gate's state and every finished search's figures into
  // `registry` (must outlive the service); call before serving.
  void AttachMetrics(net::MetricsRegistry* registry) {
    metrics_ = std::make_unique<ServiceMetrics>(registry, &gate_);
  }

 private:
  ServedRules* rules_;
  profiler::ProfilerClient* profiler_;
  ServiceLimits limits_;
  net::AdmissionGate gate_;
  std::unique_ptr<ServiceMetrics> metrics_;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_OPTIMIZER_SERVICE_H_
