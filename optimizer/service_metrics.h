// What the optimizer service exports on /metrics besides the per-RPC
// counts: the admission gate's state, and per search its time, graph sizes,
// stop reason and ILP outcome (docs/cluster.md).
#ifndef TASO_OPTIMIZER_SERVICE_METRICS_H_
#define TASO_OPTIMIZER_SERVICE_METRICS_H_

#include "net/admission.h"
#include "net/metrics.h"
#include "proto/optimizer.pb.h"

namespace taso::optimizer {

class ServiceMetrics {
 public:
  // `registry` and `gate` must outlive this.
  ServiceMetrics(net::MetricsRegistry* registry, const net::AdmissionGate* gate);

  // One finished search, from the report it returned.
  void Record(const Report& report) const;

 private:
  net::Counter searches_;
  net::Histogram search_seconds_;
  net::Gauge last_nodes_before_;
  net::Gauge last_nodes_after_;
  net::Counter nodes_before_total_;
  net::Counter ilp_outcomes_;
  net::Gauge last_enodes_;
  net::Histogram enodes_;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_SERVICE_METRICS_H_
