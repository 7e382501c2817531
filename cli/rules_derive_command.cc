#include "cli/rules_derive_command.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "core/json_text.h"
#include "core/rule_sexpr.h"
#include "core/tensat_rules.h"
#include "optimizer/eqsat/derive.h"
#include "optimizer/rule_source.h"

namespace taso::cli {
namespace {

using optimizer::DeriveOptions;
using optimizer::DeriveOutcome;
using optimizer::RewriteRule;

// One rule to derive: a rule of the other set, or one of ours (--self).
struct Target {
  std::string name;  // rule id, or "line N" of a text file
  std::string text;  // as written, or our S-expression
  std::string as_ours;  // a text file's rule converted to our syntax (core/tensat_rules.h)
  std::optional<rules::Rule> rule;
  std::string not_expressible;
  int ours = -1;  // --self: its index among our usable rules
};

std::string Sexpr(const rules::Rule& rule) {
  auto s = RuleToSexpr(rule);
  return s.ok() ? *s : absl::StrCat("(", s.status().message(), ")");
}

// The other set's rules, from a RuleCollection or a text file.
absl::StatusOr<std::vector<Target>> ReadAgainst(const std::string& path) {
  std::vector<Target> targets;
  if (absl::EndsWith(path, ".pb") || absl::EndsWith(path, ".json")) {
    auto collection = optimizer::ReadRulesFile(path);
    if (!collection.ok()) return collection.status();
    for (const rules::Rule& r : collection->rules()) targets.push_back({r.id(), Sexpr(r), "", r, "", -1});
    return targets;
  }
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  auto read = ReadTensatRules(text.str());
  if (!read.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", read.status().message()));
  for (TensatRule& r : *read) {
    targets.push_back({absl::StrCat("line ", r.line), r.text, r.sexpr, std::move(r.rule), r.not_expressible, -1});
  }
  return targets;
}

// Our proved rules that can be used, each with its rewrites (both ways).
struct OurRules {
  std::vector<rules::Rule> rules;
  std::vector<std::vector<RewriteRule>> rewrites;  // per rule
  int unusable = 0;
  std::string first_unusable;

  std::vector<RewriteRule> AllBut(int skip) const {
    std::vector<RewriteRule> all;
    for (int i = 0; i < static_cast<int>(rewrites.size()); ++i) {
      if (i != skip) all.insert(all.end(), rewrites[i].begin(), rewrites[i].end());
    }
    return all;
  }
};

OurRules Usable(std::vector<rules::Rule> proved) {
  OurRules ours;
  for (rules::Rule& r : proved) {
    if (r.status() != rules::RULE_STATUS_PROVED) continue;
    auto rewrites = optimizer::RewritesFromRule(r);
    if (!rewrites.ok()) {
      if (ours.unusable++ == 0) ours.first_unusable = absl::StrCat("rule ", r.id(), ": ", rewrites.status().message());
      continue;
    }
    ours.rules.push_back(std::move(r));
    ours.rewrites.push_back(*std::move(rewrites));
  }
  return ours;
}

// What became of one rule: a derivation's outcome, or why none was tried.
enum class Outcome { kDerived, kSaturated, kLimit, kNotExpressible, kError };

Outcome OutcomeOf(DeriveOutcome d) {
  switch (d) {
    case DeriveOutcome::kDerived: return Outcome::kDerived;
    case DeriveOutcome::kSaturated: return Outcome::kSaturated;
    case DeriveOutcome::kLimit: return Outcome::kLimit;
  }
  return Outcome::kLimit;
}

// As JSON names it, and as the table does.
std::string OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kNotExpressible: return "not_expressible";
    case Outcome::kError: return "error";
    case Outcome::kDerived: return optimizer::DeriveOutcomeName(DeriveOutcome::kDerived);
    case Outcome::kSaturated: return optimizer::DeriveOutcomeName(DeriveOutcome::kSaturated);
    case Outcome::kLimit: return optimizer::DeriveOutcomeName(DeriveOutcome::kLimit);
  }
  return "error";
}
std::string OutcomeLabel(Outcome o) {
  switch (o) {
    case Outcome::kDerived: return "derived";
    case Outcome::kSaturated: return "not derived";
    case Outcome::kLimit: return "undecided";
    case Outcome::kNotExpressible: return "not expressible";
    case Outcome::kError: return "error";
  }
  return "error";
}

struct Result {
  const Target* target;
  Outcome outcome = Outcome::kError;
  std::string detail;  // eqsat's stop, the reason it is not expressible, or the error
  optimizer::Derivation derivation;
  bool derivation_ran() const { return outcome != Outcome::kNotExpressible && outcome != Outcome::kError; }
};

struct Totals {
  int rules = 0, derived = 0, saturated = 0, limit = 0, not_expressible = 0, errors = 0;
  int expressible() const { return rules - not_expressible - errors; }
  double percent() const { return expressible() > 0 ? 100.0 * derived / expressible() : 0.0; }
};

Json ResultJson(const Result& r) {
  Json json = {{"rule", r.target->name}, {"outcome", OutcomeName(r.outcome)}, {"text", r.target->text}};
  if (!r.target->as_ours.empty() && r.target->as_ours != r.target->text) json["as_ours"] = r.target->as_ours;
  if (!r.derivation_ran()) {
    json["reason"] = r.detail;
    return json;
  }
  json["stop"] = r.detail;
  json["iterations"] = r.derivation.iterations;
  json["enodes"] = r.derivation.enodes;
  json["seconds"] = absl::ToDoubleSeconds(r.derivation.time);
  return json;
}

std::string ResultLine(const Result& r) {
  const std::string why = r.derivation_ran() ? absl::StrFormat("%d rounds, %d e-nodes, %s", r.derivation.iterations,
                                                               r.derivation.enodes, r.detail)
                                             : r.detail;
  return absl::StrFormat("%-10s %-16s %s\n    (%s)\n", r.target->name, OutcomeLabel(r.outcome), r.target->text, why);
}

// Our proved rules to derive with: --rules FILE's if given, else the
// store's. Unusable rules are warned about, as the optimizer does; none
// usable at all is an error.
absl::StatusOr<OurRules> LoadOurRules(const DeriveCommandOptions& options, std::vector<rules::Rule> stored,
                                      std::ostream& err) {
  if (!options.rules_file.empty()) {
    auto collection = optimizer::ReadRulesFile(options.rules_file);
    if (!collection.ok()) return collection.status();
    stored.assign(collection->rules().begin(), collection->rules().end());
  }
  OurRules ours = Usable(std::move(stored));
  optimizer::RuleSet unused;  // for the optimizer's own warning
  unused.unusable = ours.unusable;
  unused.first_unusable = ours.first_unusable;
  if (std::string warning = optimizer::UnusableRulesWarning(unused); !warning.empty()) {
    err << "taso rules derive: " << warning << "\n";
  }
  if (ours.rules.empty()) return absl::FailedPreconditionError("no usable proved rules to derive with");
  return ours;
}

// `sample` of the targets, every k-th (k fractional), so the sample spans
// the whole set; all of them if there are no more than `sample`.
std::vector<Target> SampleEvenly(std::vector<Target> targets, int sample) {
  if (sample <= 0 || sample >= static_cast<int>(targets.size())) return targets;
  std::vector<Target> sampled;
  for (int i = 0; i < sample; ++i) {
    sampled.push_back(std::move(targets[static_cast<size_t>(i) * targets.size() / sample]));
  }
  return sampled;
}

// Targets part, part + parts, ...: parts 0 .. parts-1 cover the set once.
std::vector<Target> TakePart(std::vector<Target> targets, int part, int parts) {
  if (parts <= 1) return targets;
  std::vector<Target> mine;
  for (size_t i = part; i < targets.size(); i += parts) mine.push_back(std::move(targets[i]));
  return mine;
}

// The rules to derive: each of ours (--self) or the other set's, then
// --sample and --part applied, in that order.
absl::StatusOr<std::vector<Target>> SelectTargets(const DeriveCommandOptions& options, const OurRules& ours) {
  std::vector<Target> targets;
  if (options.self) {
    for (size_t i = 0; i < ours.rules.size(); ++i) {
      targets.push_back({ours.rules[i].id(), Sexpr(ours.rules[i]), "", ours.rules[i], "", static_cast<int>(i)});
    }
  } else {
    auto read = ReadAgainst(options.against);
    if (!read.ok()) return read.status();
    targets = *std::move(read);
  }
  return TakePart(SampleEvenly(std::move(targets), options.sample), options.part, options.parts);
}

DeriveOptions DeriveOptionsOf(const DeriveCommandOptions& options) {
  DeriveOptions derive;
  derive.mode = options.mode == "lhs" ? optimizer::DeriveMode::kLhs : optimizer::DeriveMode::kLhsAndRhs;
  derive.iteration_limit = options.iter_limit;
  derive.node_limit = options.node_limit;
  derive.time_limit = absl::Seconds(options.time_limit_s);
  derive.kinds_as_declared = options.kinds_as_declared;
  return derive;
}

// Derives one target, counting its outcome in `totals`. `all`: our
// rewrites, built once; --self derives each of ours from the others only.
Result DeriveTarget(const Target& t, const OurRules& ours, const std::vector<RewriteRule>& all,
                    const DeriveOptions& derive, Totals& totals) {
  Result r{&t};
  ++totals.rules;
  if (!t.rule) {
    r.outcome = Outcome::kNotExpressible;
    r.detail = t.not_expressible;
    ++totals.not_expressible;
    return r;
  }
  auto d = t.ours >= 0 ? optimizer::DeriveRule(*t.rule, ours.AllBut(t.ours), derive)
                       : optimizer::DeriveRule(*t.rule, all, derive);
  if (!d.ok()) {
    r.outcome = Outcome::kError;
    r.detail = std::string(d.status().message());
    ++totals.errors;
    return r;
  }
  r.derivation = *d;
  r.outcome = OutcomeOf(d->outcome);
  r.detail = d->stop_detail;
  if (d->outcome == DeriveOutcome::kDerived) ++totals.derived;
  if (d->outcome == DeriveOutcome::kSaturated) ++totals.saturated;
  if (d->outcome == DeriveOutcome::kLimit) ++totals.limit;
  return r;
}

struct Derivations {
  std::vector<Result> results;  // point into the targets derived
  Totals totals;
};

// Derives every target. The table streams a line per rule as it goes; JSON
// is written at the end, so its progress goes to `err` every 100 rules.
Derivations DeriveAll(const std::vector<Target>& targets, const OurRules& ours, const DeriveOptions& derive,
                      bool json, std::ostream& out, std::ostream& err) {
  const std::vector<RewriteRule> all = ours.AllBut(-1);
  Derivations d;
  for (const Target& t : targets) {
    Result r = DeriveTarget(t, ours, all, derive, d.totals);
    if (!json) out << ResultLine(r) << std::flush;
    if (json && d.totals.rules % 100 == 0) {
      err << "taso rules derive: " << d.totals.rules << " of " << targets.size() << " rules, " << d.totals.derived
          << " derived\n";
    }
    d.results.push_back(std::move(r));
  }
  return d;
}

// The totals as one JSON line, then a line per rule.
void WriteJson(const DeriveCommandOptions& options, const OurRules& ours, const Derivations& d, double seconds,
               std::ostream& out) {
  const Totals& totals = d.totals;
  const Json summary = {{"against", options.self ? "self" : options.against},
                        {"mode", options.mode},
                        {"our_rules", ours.rules.size()},
                        {"our_rules_unusable", ours.unusable},
                        {"rules", totals.rules},
                        {"expressible", totals.expressible()},
                        {"derived", totals.derived},
                        {"percent", totals.percent()},
                        {"saturated", totals.saturated},
                        {"limit", totals.limit},
                        {"not_expressible", totals.not_expressible},
                        {"errors", totals.errors},
                        {"iter_limit", options.iter_limit},
                        {"node_limit", options.node_limit},
                        {"time_limit_s", options.time_limit_s},
                        {"kinds_as_declared", options.kinds_as_declared},
                        {"sample", options.sample},
                        {"part", absl::StrCat(options.part, "/", options.parts)},
                        {"seconds", seconds}};
  out << JsonLine(summary) << "\n";
  for (const Result& r : d.results) out << JsonLine(ResultJson(r)) << "\n";
}

// The table's closing summary (its rule lines were streamed by DeriveAll).
void WriteSummary(const DeriveCommandOptions& options, const OurRules& ours, const Totals& totals, double seconds,
                  std::ostream& out) {
  out << absl::StrFormat("not derived: %d saturated without the sides meeting, %d stopped at a limit "
                         "(mode %s, per rule --iter-limit %d --node-limit %d --time-limit-s %g%s)\n",
                         totals.saturated, totals.limit, options.mode, options.iter_limit, options.node_limit,
                         options.time_limit_s, options.kinds_as_declared ? ", --kinds-as-declared" : "");
  if (totals.not_expressible > 0 || totals.errors > 0) {
    out << absl::StrFormat("not counted: %d not expressible in our rules, %d that could not be built\n",
                           totals.not_expressible, totals.errors);
  }
  if (options.self) {
    out << absl::StrFormat("redundant: %d of our %d rules are derived by the others\n", totals.derived,
                           totals.expressible());
  }
  out << absl::StrFormat("derives %d of %d (%.1f%%) with %d rules, in %.1f s%s\n", totals.derived,
                         totals.expressible(), totals.percent(), ours.rules.size(), seconds,
                         options.parts > 1 ? absl::StrFormat(" (part %d of %d)", options.part, options.parts) : "");
}

}  // namespace

absl::Status CheckDeriveOptions(const DeriveCommandOptions& o) {
  if (o.self == !o.against.empty()) {
    return absl::InvalidArgumentError("give one of --against FILE (another rule set) or --self (leave-one-out)");
  }
  if (o.mode != "lhs" && o.mode != "lhs-and-rhs") {
    return absl::InvalidArgumentError(absl::StrCat("unknown --mode '", o.mode, "': use lhs or lhs-and-rhs"));
  }
  if (o.iter_limit < 1 || o.node_limit < 1 || !(o.time_limit_s > 0)) {
    return absl::InvalidArgumentError("--iter-limit, --node-limit and --time-limit-s must be positive");
  }
  if (o.sample < 0) return absl::InvalidArgumentError("--sample must be 0 (every rule) or positive");
  if (o.parts < 1 || o.part < 0 || o.part >= o.parts) {
    return absl::InvalidArgumentError(absl::StrCat("--part ", o.part, "/", o.parts, ": give I/N with 0 <= I < N"));
  }
  return absl::OkStatus();
}

int RunDerive(const DeriveCommandOptions& options, std::vector<rules::Rule> stored, bool json, std::ostream& out,
              std::ostream& err) {
  auto fail = [&](int code, absl::string_view message) {
    err << "taso rules derive: " << message << "\n";
    return code;
  };
  if (absl::Status s = CheckDeriveOptions(options); !s.ok()) return fail(2, s.message());
  const absl::Time start = absl::Now();  // the reported time includes reading the rules
  auto ours = LoadOurRules(options, std::move(stored), err);
  if (!ours.ok()) return fail(1, ours.status().message());
  auto targets = SelectTargets(options, *ours);
  if (!targets.ok()) return fail(1, targets.status().message());
  // `derived` points into *targets, which outlives it.
  const Derivations derived = DeriveAll(*targets, *ours, DeriveOptionsOf(options), json, out, err);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (json) {
    WriteJson(options, *ours, derived, seconds, out);
  } else {
    WriteSummary(options, *ours, derived.totals, seconds, out);
  }
  return 0;
}

}  // namespace taso::cli
