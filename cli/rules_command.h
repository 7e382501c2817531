// `taso rules stats|list|show ID|export|import FILE|fuzz|match MODEL|derive`: the rule database, from a
// running store (--store) or from a database directory (--db; a temporary
// local store is started on it for the duration of the command).
#ifndef TASO_CLI_RULES_COMMAND_H_
#define TASO_CLI_RULES_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/rules_derive_command.h"
#include "verifier/rule_fuzz.h"

namespace taso::cli {

struct RulesOptions {
  std::string subcommand;            // stats | list | show | export | import | fuzz | match | derive
  std::vector<std::string> args;     // show: the rule id; match: the model
  std::string store;
  std::string db = "taso-db";
  std::string job_id;
  std::vector<std::string> statuses;  // proved, pruned, unknown, ...; empty: proved
  std::vector<std::string> ops;       // rules using any of these operators
  std::vector<std::string> ops_all;   // rules using every one of these operators
  std::vector<std::string> only_ops;  // rules using no other operator
  std::string pattern;                // rules whose side contains this S-expression (core/rule_pattern.h)
  std::string side = "either";        // the side --pattern looks at: source | target | either
  std::vector<std::string> axioms;    // rules whose proof used every one of these axioms
  std::string rules_file;             // match: rules from this file instead of a store
  int max_sites = 5;                  // match: places listed per rule
  bool structural = false;            // match: also the rewrites the searches instantiate for the model
  int size = 0;                       // larger side has at most this many operators
  int limit = 0;                      // list: at most this many (0: all)
  std::string format = "sexpr";       // export: sexpr | json | proto
  std::string output;                 // export: file (default stdout; proto needs a file)
  bool json = false;
  // Over several store shards: a verified job not pruned as one set is
  // pruned in memory when read, up to this many proved rules.
  int64_t union_prune_max_rules = 200000;
  std::string svg;                    // show: also draw the rule's two sides to this SVG file
  verifier::FuzzOptions fuzz;
  DeriveCommandOptions derive;
};

// Exit codes: 0 ok; 1 error (fuzz: a mismatch); 2 bad options; 3 store
// unreachable; 4 no such rule.
int RunRules(const RulesOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_RULES_COMMAND_H_
