// `taso rules derive`: rule-set quality as Ruler and Enumo measure it. Our
// proved rules (from --rules FILE, or the store as `taso rules` reads it) run
// equality saturation on each rule of another set (--against FILE) and we
// report which they derive (optimizer/eqsat/derive.h); --self derives each of
// our rules from all the others (leave-one-out), which measures redundancy.
// `taso rules` (rules_command.cc) owns the store connection and hands the
// rules over.
#ifndef TASO_CLI_RULES_DERIVE_COMMAND_H_
#define TASO_CLI_RULES_DERIVE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/rules.pb.h"

namespace taso::cli {

struct DeriveCommandOptions {
  // The other set: a RuleCollection (.pb, or .json) or rules as text, in
  // Tensat's converted.txt syntax or ours (core/tensat_rules.h).
  std::string against;
  bool self = false;                 // leave-one-out over our own rules instead
  std::string mode = "lhs";          // lhs | lhs-and-rhs
  int iter_limit = 30;               // per rule derived
  int node_limit = 10000;            // e-nodes, per rule
  double time_limit_s = 10;          // per rule
  // Our weight variables bind only what the optimizer lets them (weights and
  // what is computed from them), rather than any variable of the rule.
  bool kinds_as_declared = false;
  std::string rules_file;            // our rules from this RuleCollection instead of the store
  int sample = 0;                    // derive only this many rules, spread evenly over the set (0: all)
  // Derive only part `part` of `parts` (rules part, part + parts, ... of the
  // set, after sampling): processes or machines given parts 0 .. parts-1
  // derive the whole set between them, and their totals add up.
  int part = 0;
  int parts = 1;
};

// Bad options (the message says which), before any store is opened.
absl::Status CheckDeriveOptions(const DeriveCommandOptions& options);

// `ours`: our rules as the store gave them (any status; only proved rules
// are used); ignored when options.rules_file names them. Exit codes: 0
// done, 1 a rule file could not be read or no usable rules, 2 bad options.
int RunDerive(const DeriveCommandOptions& options, std::vector<rules::Rule> ours, bool json, std::ostream& out,
              std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_RULES_DERIVE_COMMAND_H_
