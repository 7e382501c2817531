#include "optimizer/service_metrics.h"

#include <string>

#include "absl/strings/ascii.h"

namespace taso::optimizer {

ServiceMetrics::ServiceMetrics(net::MetricsRegistry* registry, const net::AdmissionGate* gate)
    : searches_(registry->AddCounter("taso_optimizer_searches_total", "Searches finished, by search and stop reason",
                                     {"search", "stop_reason"})),
      search_seconds_(registry->AddHistogram("taso_optimizer_search_seconds", "Search time of finished searches",
                                             net::LatencyBuckets(), {"search"})),
      last_nodes_before_(registry->AddGauge("taso_optimizer_last_nodes_before", "Operators in the last input graph")),
      last_nodes_after_(registry->AddGauge("taso_optimizer_last_nodes_after", "Operators in the last result graph")),
      nodes_before_total_(registry->AddCounter("taso_optimizer_nodes_before_total",
                                               "Operators in all input graphs searched")),
      ilp_outcomes_(registry->AddCounter("taso_optimizer_ilp_outcomes_total",
                                         "EQSAT extractions by ILP outcome", {"outcome"})),
      last_enodes_(registry->AddGauge("taso_optimizer_last_enodes", "E-nodes of the last EQSAT search's e-graph")),
      enodes_(registry->AddHistogram("taso_optimizer_enodes", "E-nodes of each EQSAT search's e-graph",
                                     {1e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5}, {})) {
  auto gate_value = [gate](auto field) {
    return [gate, field] { return static_cast<double>(gate->counters().*field); };
  };
  using C = net::AdmissionGate::Counters;
  registry->AddCallback("taso_optimizer_searches_running", "Optimize calls holding a search slot",
                        net::MetricType::kGauge, gate_value(&C::running));
  registry->AddCallback("taso_optimizer_searches_waiting", "Optimize calls queued for a slot",
                        net::MetricType::kGauge, gate_value(&C::waiting));
  registry->AddCallback("taso_optimizer_admitted_total", "Optimize calls admitted to search",
                        net::MetricType::kCounter, gate_value(&C::admitted));
  registry->AddCallback("taso_optimizer_rejected_total", "Optimize calls refused: the queue was full",
                        net::MetricType::kCounter, gate_value(&C::rejected));
  registry->AddCallback("taso_optimizer_abandoned_total", "Optimize calls that gave up waiting for a slot",
                        net::MetricType::kCounter, gate_value(&C::abandoned));
}

void ServiceMetrics::Record(const Report& report) const {
  std::string search = report.search().empty() ? "unknown" : report.search();
  searches_.Increment({search, absl::AsciiStrToLower(StopReason_Name(report.stop_reason()))});
  search_seconds_.Observe(report.search_time_ms() / 1e3, {search});
  last_nodes_before_.Set(report.nodes_before());
  last_nodes_after_.Set(report.nodes_after());
  nodes_before_total_.Increment({}, report.nodes_before());
  if (report.enodes() > 0) {
    last_enodes_.Set(static_cast<double>(report.enodes()));
    enodes_.Observe(static_cast<double>(report.enodes()), {});
  }
  if (report.ilp_outcome() != ILP_OUTCOME_UNSPECIFIED) {
    ilp_outcomes_.Increment({absl::AsciiStrToLower(IlpOutcome_Name(report.ilp_outcome()))});
  }
}

}  // namespace taso::optimizer
