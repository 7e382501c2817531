#include "rules/builtin_rules.h"

namespace taso::builtin_rules {

// Defined in the file the build generates from default_rules.pb.
extern const unsigned char kDefaultRules[];
extern const unsigned long kDefaultRulesSize;

absl::string_view DefaultRuleCollection() {
  return absl::string_view(reinterpret_cast<const char*>(kDefaultRules), kDefaultRulesSize);
}

}  // namespace taso::builtin_rules
