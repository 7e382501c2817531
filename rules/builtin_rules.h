// The proved, pruned size-3 rule set built into taso and taso_optimizer, so
// `taso optimize model.onnx -o out.onnx` uses proved rules on a machine where
// nobody ran `taso generate`. It is `taso generate && taso verify` on the
// default spec, exported (`taso rules export --format proto`) into
// rules/default_rules.pb; //tests/verify checks that the pipeline still
// produces exactly these rules.
#ifndef TASO_RULES_BUILTIN_RULES_H_
#define TASO_RULES_BUILTIN_RULES_H_

#include "absl/strings/string_view.h"

namespace taso::builtin_rules {

// A binary taso.rules.RuleCollection.
absl::string_view DefaultRuleCollection();

}  // namespace taso::builtin_rules

#endif  // TASO_RULES_BUILTIN_RULES_H_
