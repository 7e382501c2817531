#include "cli/rules_fuzz_command.h"

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/json_text.h"
#include "core/rule_sexpr.h"

namespace taso::cli {
namespace {

using verifier::FuzzMismatch;
using verifier::FuzzOptions;
using verifier::FuzzOutcome;
using verifier::FuzzReport;
using verifier::FuzzTotals;
using verifier::RuleFuzzResult;

// Rules listed by id in the human table, per kind of finding.
constexpr int kListed = 20;

std::string Sexpr(const rules::Rule& rule) {
  auto s = RuleToSexpr(rule);
  return s.ok() ? *s : absl::StrCat("(", s.status().message(), ")");
}

std::string Axioms(const rules::Rule& rule) {
  return rule.proof().axioms_used().empty() ? "-" : absl::StrJoin(rule.proof().axioms_used(), ", ");
}

std::string MismatchLine(const FuzzMismatch& m) {
  return absl::StrFormat("instance %d, input seed %d, %s: %s", m.instance, m.input_seed,
                         verifier::DescribeShapes(m.shapes), m.detail);
}

Json MismatchJson(const FuzzMismatch& m) {
  Json shapes = Json::object();
  for (const verifier::VariableShape& s : m.shapes) shapes[s.name] = s.dims;
  return {{"instance", m.instance},
          {"input_seed", m.input_seed},
          {"shapes", shapes},
          {"domain", verifier::FuzzDomainName(m.domain)},
          {"source_output", m.source_output},
          {"target_output", m.target_output},
          {"output_dims", m.output_dims},
          {"element", m.element},
          {"source_value", m.source_value},
          {"target_value", m.target_value},
          {"detail", m.detail}};
}

Json RuleJson(const rules::Rule& rule, const RuleFuzzResult& r) {
  Json json = {{"id", r.rule_id},
               {"outcome", verifier::FuzzOutcomeName(r.outcome)},
               {"instances_run", r.instances_run},
               {"instances_not_found", r.instances_not_found},
               {"instances_at_other_shapes", r.instances_at_other_shapes},
               {"instances_int32", r.instances_int32},
               {"elements_loosened", r.elements_loosened},
               {"mismatches", r.mismatches}};
  if (!r.reason.empty()) json["reason"] = r.reason;
  if (r.mismatches > 0) {
    Json examples = Json::array();
    for (const FuzzMismatch& m : r.examples) examples.push_back(MismatchJson(m));
    json["sexpr"] = Sexpr(rule);
    json["axioms_used"] = std::vector<std::string>(rule.proof().axioms_used().begin(), rule.proof().axioms_used().end());
    json["examples"] = std::move(examples);
  }
  return json;
}

// The totals on one line, first, so scripts can read them without a parser;
// then one line per rule.
void PrintJson(const std::vector<rules::Rule>& rules, const FuzzReport& report, const FuzzOptions& options,
               double seconds, std::ostream& out) {
  const FuzzTotals& t = report.totals;
  const Json totals = {{"rules", t.rules},
                       {"rules_fuzzed", t.rules_fuzzed},
                       {"rules_not_fuzzed", t.rules_not_fuzzed},
                       {"rules_without_instances", t.rules_without_instances},
                       {"rules_only_own_shapes", t.rules_only_own_shapes},
                       {"rules_with_mismatches", t.rules_with_mismatches},
                       {"instances_run", t.instances_run},
                       {"instances_not_found", t.instances_not_found},
                       {"instances_at_other_shapes", t.instances_at_other_shapes},
                       {"instances_int32", t.instances_int32},
                       {"elements_loosened", t.elements_loosened},
                       {"mismatches", t.mismatches},
                       {"seconds", RoundTo(seconds, 1)}};
  const Json settings = {{"instances", options.instances}, {"seed", options.seed},
                         {"max_dim", options.max_dim},     {"max_elements", options.max_elements},
                         {"attempts", options.attempts},   {"tolerance", options.tolerance}};
  out << "{\"totals\": " << JsonLine(totals) << ", \"options\": " << JsonLine(settings) << ",\n\"rules\": [";
  for (size_t i = 0; i < report.rules.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n") << JsonLine(RuleJson(rules[i], report.rules[i]));
  }
  out << "\n]}\n";
}

// Up to kListed ids of the rules `pick` selects, with a count of the rest.
template <typename Pick>
void ListIds(const std::string& title, const FuzzReport& report, Pick pick, std::ostream& out) {
  std::vector<std::string> lines;
  for (const RuleFuzzResult& r : report.rules) {
    if (auto line = pick(r); !line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return;
  out << title << " (" << lines.size() << "):\n";
  for (size_t i = 0; i < lines.size() && i < kListed; ++i) out << "  " << lines[i] << "\n";
  if (lines.size() > kListed) out << "  ... and " << lines.size() - kListed << " more (--json lists all)\n";
}

void PrintTable(const std::vector<rules::Rule>& rules, const FuzzReport& report, const FuzzOptions& options,
                double seconds, std::ostream& out) {
  const FuzzTotals& t = report.totals;
  out << absl::StrFormat("fuzzed %d of %d rules: %d instances each (seed %d, dims <= %d, <= %d elements per tensor, "
                         "%d attempts per instance)\n",
                         t.rules_fuzzed, t.rules, options.instances, options.seed, options.max_dim,
                         options.max_elements, options.attempts);
  auto row = [&](const char* what, int64_t n, const std::string& note) {
    out << absl::StrFormat("  %-28s %10d  %s\n", what, n, note);
  };
  row("instances run", t.instances_run,
      absl::StrFormat("%d at shapes other than the rule's own, %d also exactly in int32", t.instances_at_other_shapes,
                      t.instances_int32));
  row("instances not found", t.instances_not_found, "no shapes keeping the conditions within the attempts");
  row("rules without any instance", t.rules_without_instances, "");
  row("rules only at their own shapes", t.rules_only_own_shapes, "");
  row("rules not fuzzed", t.rules_not_fuzzed, "no usable side conditions");
  row("float elements loosened", t.elements_loosened, "agree only at the scale of their terms");
  row("mismatches", t.mismatches, absl::StrFormat("instances, in %d rules", t.rules_with_mismatches));
  out << absl::StrFormat("  wall time %.1f s\n", seconds);
  for (size_t i = 0; i < report.rules.size(); ++i) {
    const RuleFuzzResult& r = report.rules[i];
    if (r.mismatches == 0) continue;
    out << absl::StrFormat("MISMATCH rule %s (%d of %d instances): %s\n  proof used: %s\n", r.rule_id, r.mismatches,
                           r.instances_run, Sexpr(rules[i]), Axioms(rules[i]));
    for (const FuzzMismatch& m : r.examples) out << "  " << MismatchLine(m) << "\n";
  }
  ListIds("not fuzzed", report, [](const RuleFuzzResult& r) {
    if (r.outcome == FuzzOutcome::kFuzzed) return std::string();
    return absl::StrCat(r.rule_id, ": ", verifier::FuzzOutcomeName(r.outcome), ": ", r.reason);
  }, out);
  ListIds("no instance found", report, [](const RuleFuzzResult& r) {
    return r.outcome == FuzzOutcome::kFuzzed && r.instances_run == 0 ? r.rule_id : std::string();
  }, out);
}

}  // namespace

int FuzzAndReport(const std::vector<rules::Rule>& rules, const FuzzOptions& options, bool json, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  const FuzzReport report = verifier::FuzzRules(rules, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (json) {
    PrintJson(rules, report, options, seconds, out);
  } else {
    PrintTable(rules, report, options, seconds, out);
  }
  return report.totals.mismatches > 0 ? 1 : 0;
}

}  // namespace taso::cli
