#include "verifier/axiom_validation_report.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/json_text.h"

namespace taso::verifier {
namespace {

struct Totals {
  int64_t instances = 0, held = 0, failed = 0, unknown = 0, ill_typed = 0, triggered = 0, one_sided = 0;
  int64_t strata = 0, empty_strata = 0, capped_strata = 0, failed_axioms = 0;
};

Totals Sum(const std::vector<AxiomValidation>& results) {
  Totals t;
  for (const AxiomValidation& r : results) {
    t.instances += r.instances;
    t.held += r.held;
    t.failed += r.failed;
    t.unknown += r.unknown;
    t.ill_typed += r.ill_typed;
    t.triggered += r.triggered;
    t.one_sided += r.one_sided;
    t.strata += r.strata;
    t.empty_strata += static_cast<int64_t>(r.empty_strata.size());
    t.capped_strata += r.capped_strata;
    t.failed_axioms += r.failed > 0 ? 1 : 0;
  }
  return t;
}

// "sh=1: 1200, sh=2: 900, groups=3: 40"
std::string ByParamText(const AxiomValidation& r) {
  std::vector<std::string> parts;
  for (const auto& [param, values] : r.by_param) {
    for (const auto& [value, n] : values) parts.push_back(absl::StrCat(param, "=", value, ": ", n));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::string ValidationTable(const std::vector<AxiomValidation>& results, bool by_param) {
  std::string out =
      absl::StrFormat("%-32s %9s %9s %6s %7s %11s %9s %9s %6s %5s %6s %8s\n", "axiom", "instances", "held", "failed",
                      "unknown", "ill-typed", "triggered", "one-sided", "strata", "empty", "capped", "seconds");
  for (const AxiomValidation& r : results) {
    absl::StrAppendFormat(&out, "%-32s %9d %9d %6d %7d %11d %9d %9d %6d %5d %6d %8.1f\n", r.name, r.instances,
                          r.held, r.failed, r.unknown, r.ill_typed, r.triggered, r.one_sided, r.strata,
                          r.empty_strata.size(), r.capped_strata, r.seconds);
    if (r.failed > 0) absl::StrAppend(&out, "    counterexample: ", r.counterexample, "\n");
    for (const Stratum& s : r.empty_strata) absl::StrAppend(&out, "    no instance: ", StratumToString(s), "\n");
    if (by_param && !r.by_param.empty()) absl::StrAppend(&out, "    by parameter: ", ByParamText(r), "\n");
  }
  const Totals t = Sum(results);
  absl::StrAppendFormat(&out,
                        "%d instances (%d held, %d failed, %d unknown), %d ill-typed shape assignments; "
                        "%d triggered, %d typed on one side only; %d strata, %d without an instance, %d capped; "
                        "%d axiom(s) failed\n",
                        t.instances, t.held, t.failed, t.unknown, t.ill_typed, t.triggered, t.one_sided, t.strata,
                        t.empty_strata, t.capped_strata, t.failed_axioms);
  return out;
}

std::string ValidationJson(const std::vector<AxiomValidation>& results, const ValidationOptions& options,
                           double wall_seconds) {
  const Totals t = Sum(results);
  Json axioms = Json::array();
  for (const AxiomValidation& r : results) {
    Json empty = Json::array();
    for (const Stratum& s : r.empty_strata) {
      Json assignment = Json::object();
      for (const auto& [name, value] : s) assignment[name] = value;
      empty.push_back(std::move(assignment));
    }
    Json params = Json::object();
    for (const auto& [param, values] : r.by_param) {
      Json counts = Json::object();
      for (const auto& [value, n] : values) counts[absl::StrCat(value)] = n;
      params[param] = std::move(counts);
    }
    axioms.push_back({{"name", r.name},
                      {"instances", r.instances},
                      {"held", r.held},
                      {"failed", r.failed},
                      {"unknown", r.unknown},
                      {"ill_typed", r.ill_typed},
                      {"triggered", r.triggered},
                      {"one_sided", r.one_sided},
                      {"strata", r.strata},
                      {"capped_strata", r.capped_strata},
                      {"empty_strata", std::move(empty)},
                      {"by_param", std::move(params)},
                      {"counterexample", r.counterexample},
                      {"seconds", RoundTo(r.seconds, 3)}});
  }
  const Json report = {{"max_dim", options.max_dim},
                       {"max_instances_per_stratum", options.max_instances_per_stratum},
                       {"instances", t.instances},
                       {"held", t.held},
                       {"failed", t.failed},
                       {"unknown", t.unknown},
                       {"ill_typed", t.ill_typed},
                       {"triggered", t.triggered},
                       {"one_sided", t.one_sided},
                       {"strata", t.strata},
                       {"empty_strata", t.empty_strata},
                       {"capped_strata", t.capped_strata},
                       {"failed_axioms", t.failed_axioms},
                       {"wall_seconds", RoundTo(wall_seconds, 3)},
                       {"axioms", std::move(axioms)}};
  return JsonLine(report) + "\n";
}

}  // namespace taso::verifier
