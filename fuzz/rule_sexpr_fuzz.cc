// Rule S-expressions (`taso rules import`, core/rule_sexpr.h): any text
// parses or gets an error; a parsed rule prints, and what it prints parses
// back to a rule that prints the same.
#include <cstdint>
#include <string>

#include "core/rule_sexpr.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // rules are lines; longer inputs only slow the search
  auto rules = taso::RulesFromSexpr(std::string(reinterpret_cast<const char*>(data), size));
  if (!rules.ok()) return 0;
  for (const auto& rule : *rules) {
    auto text = taso::RuleToSexpr(rule);
    if (!text.ok()) continue;
    auto again = taso::RulesFromSexpr(*text);
    FUZZ_CHECK(again.ok() && again->size() == 1, "a printed rule does not parse back");
    auto text_again = taso::RuleToSexpr((*again)[0]);
    FUZZ_CHECK(text_again.ok() && *text_again == *text, "printing a parsed rule is not stable");
  }
  return 0;
}
