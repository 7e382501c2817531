// `taso rules stats|list|show ID|export|import FILE|fuzz|derive`: the rule database, from a
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
  std::string subcommand;            // stats | list | show | export | import | fuzz | derive
  std::vector<std::string> args;     // show: the rule id
  std::string store;
  std::string db = "taso-db";
  std::string job_id;
  std::vector<std::string> statuses;  // proved, pruned, unknown, ...; empty: proved
  std::vector<std::string> ops;       // rules using any of these operators
  int size = 0;                       // larger side has at most this many operators
  int limit = 0;                      // list: at most this many (0: all)
  std::string format = "sexpr";       // export: sexpr | json | proto
  std::string output;                 // export: file (default stdout; proto needs a file)
  bool json = false;
  verifier::FuzzOptions fuzz;
  DeriveCommandOptions derive;
};

// Exit codes: 0 ok; 1 error (fuzz: a mismatch); 2 bad options; 3 store
// unreachable; 4 no such rule.
int RunRules(const RulesOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_RULES_COMMAND_H_
