// What taso_optimizer's Optimize runs: admission to a search slot, then
// OptimizeOnnx with the server's limits (model size, search time) and the
// caller's deadline. The gRPC side is OptimizeFront (optimize_front.h).
#ifndef TASO_OPTIMIZER_OPTIMIZER_SERVICE_H_
#define TASO_OPTIMIZER_OPTIMIZER_SERVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "net/admission.h"
#include "optimizer/optimize.h"
#include "optimizer/optimize_options.h"
#include "optimizer/served_rules.h"
#include "optimizer/service_metrics.h"
#include "costs/client.h"
#include "proto/optimizer.grpc.pb.h"

namespace taso::optimizer {

// A taso_optimizer's own defaults: requests of up to 512 MiB, searches of
// 60 s unless asked for up to 10 min, backtracking.
OptionDefaults ServerOptionDefaults();

struct ServiceLimits {
  // What requests leave unset, and the caps none can raise
  // (ResolveOptimizeOptions; taso_optimizer's flags).
  OptionDefaults defaults = ServerOptionDefaults();
  // Searches running at once, and calls waiting for one to finish; beyond
  // both a call is refused with RESOURCE_EXHAUSTED.
  int max_concurrent = 2;
  int max_queued = 16;
};

// The Optimize call's work, served by OptimizeFront (optimize_front.h),
// which admits a call before reading its request.
class OptimizerService {
 public:
  // `rules` and `profiler` must outlive the service; both are shared by
  // concurrent requests (the profiler clients are thread-safe).
  OptimizerService(ServedRules* rules, profiler::ProfilerClient* profiler, ServiceLimits limits)
      : rules_(rules), profiler_(profiler), limits_(limits), gate_(limits.max_concurrent, limits.max_queued) {}

  // A call in two steps: a search slot, waited for until `deadline` (or
  // refused at once when the queue is full) ...
  absl::StatusOr<net::AdmissionGate::Ticket> Admit(absl::Time deadline, const std::function<bool()>& cancelled);
  // ... or, without blocking, the refusal Admit would give now ...
  absl::Status RefuseIfFull() { return gate_.RefuseIfFull(); }
  // ... and the search, for a call holding a ticket.
  grpc::Status RunAdmitted(const OptimizeRequest& request, OptimizeResponse* response, absl::Time deadline,
                           const std::function<bool()>& cancelled);

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
