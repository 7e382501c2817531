#include "verifier/axiom_validation_report.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/json_text.h"

namespace taso::verifier {
namespace {

struct Totals {
  int64_t instances = 0, held = 0, failed = 0, unknown = 0, ill_typed = 0;
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

std::string Quoted(const std::string& s) { return absl::StrCat("\"", JsonEscape(s), "\""); }

}  // namespace

std::string ValidationTable(const std::vector<AxiomValidation>& results, bool by_param) {
  std::string out = absl::StrFormat("%-32s %9s %9s %6s %7s %11s %6s %5s %6s %8s\n", "axiom", "instances", "held",
                                    "failed", "unknown", "ill-typed", "strata", "empty", "capped", "seconds");
  for (const AxiomValidation& r : results) {
    absl::StrAppendFormat(&out, "%-32s %9d %9d %6d %7d %11d %6d %5d %6d %8.1f\n", r.name, r.instances, r.held,
                          r.failed, r.unknown, r.ill_typed, r.strata, r.empty_strata.size(), r.capped_strata,
                          r.seconds);
    if (r.failed > 0) absl::StrAppend(&out, "    counterexample: ", r.counterexample, "\n");
    for (const Stratum& s : r.empty_strata) absl::StrAppend(&out, "    no instance: ", StratumToString(s), "\n");
    if (by_param && !r.by_param.empty()) absl::StrAppend(&out, "    by parameter: ", ByParamText(r), "\n");
  }
  const Totals t = Sum(results);
  absl::StrAppendFormat(&out,
                        "%d instances (%d held, %d failed, %d unknown), %d ill-typed shape assignments; %d strata, "
                        "%d without an instance, %d capped; %d axiom(s) failed\n",
                        t.instances, t.held, t.failed, t.unknown, t.ill_typed, t.strata, t.empty_strata,
                        t.capped_strata, t.failed_axioms);
  return out;
}

std::string ValidationJson(const std::vector<AxiomValidation>& results, const ValidationOptions& options,
                           double wall_seconds) {
  const Totals t = Sum(results);
  std::vector<std::string> axioms;
  for (const AxiomValidation& r : results) {
    std::vector<std::string> empty;
    for (const Stratum& s : r.empty_strata) {
      std::vector<std::string> kv;
      for (const auto& [name, value] : s) kv.push_back(absl::StrCat(Quoted(name), ": ", value));
      empty.push_back(absl::StrCat("{", absl::StrJoin(kv, ", "), "}"));
    }
    std::vector<std::string> params;
    for (const auto& [param, values] : r.by_param) {
      std::vector<std::string> kv;
      for (const auto& [value, n] : values) kv.push_back(absl::StrCat("\"", value, "\": ", n));
      params.push_back(absl::StrCat(Quoted(param), ": {", absl::StrJoin(kv, ", "), "}"));
    }
    axioms.push_back(absl::StrFormat(
        "{\"name\": %s, \"instances\": %d, \"held\": %d, \"failed\": %d, \"unknown\": %d, \"ill_typed\": %d, "
        "\"strata\": %d, \"capped_strata\": %d, \"empty_strata\": [%s], \"by_param\": {%s}, \"counterexample\": %s, "
        "\"seconds\": %.3f}",
        Quoted(r.name), r.instances, r.held, r.failed, r.unknown, r.ill_typed, r.strata, r.capped_strata,
        absl::StrJoin(empty, ", "), absl::StrJoin(params, ", "), Quoted(r.counterexample), r.seconds));
  }
  return absl::StrFormat(
      "{\"max_dim\": %d, \"max_instances_per_stratum\": %d, \"instances\": %d, \"held\": %d, \"failed\": %d, "
      "\"unknown\": %d, \"ill_typed\": %d, \"strata\": %d, \"empty_strata\": %d, \"capped_strata\": %d, "
      "\"failed_axioms\": %d, \"wall_seconds\": %.3f, \"axioms\": [%s]}\n",
      options.max_dim, options.max_instances_per_stratum, t.instances, t.held, t.failed, t.unknown, t.ill_typed,
      t.strata, t.empty_strata, t.capped_strata, t.failed_axioms, wall_seconds, absl::StrJoin(axioms, ", "));
}

}  // namespace taso::verifier
