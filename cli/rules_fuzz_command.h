// `taso rules fuzz`: every selected rule instantiated at random shapes that
// keep its side conditions, both sides run on random inputs
// (verifier/rule_fuzz.h), and a table or JSON of what was found. `taso rules`
// (rules_command.cc) owns the store connection and hands the rules over.
#ifndef TASO_CLI_RULES_FUZZ_COMMAND_H_
#define TASO_CLI_RULES_FUZZ_COMMAND_H_

#include <ostream>
#include <vector>

#include "proto/rules.pb.h"
#include "verifier/rule_fuzz.h"

namespace taso::cli {

// Exit codes: 0 no mismatch; 1 mismatches (each printed with its instance).
int FuzzAndReport(const std::vector<rules::Rule>& rules, const verifier::FuzzOptions& options, bool json,
                  std::ostream& out);

}  // namespace taso::cli

#endif  // TASO_CLI_RULES_FUZZ_COMMAND_H_
