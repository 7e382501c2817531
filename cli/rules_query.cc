#include "cli/rules_query.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/op.h"
#include "core/rule_pattern.h"
#include "verifier/axioms.h"

namespace taso::cli {
namespace {

absl::Status AddKinds(const std::string& flag, const std::vector<std::string>& names,
                      google::protobuf::RepeatedField<int>* kinds) {
  for (const std::string& name : names) {
    auto kind = OpKindFromName(name);
    if (!kind || IsInputOrWeight(*kind)) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": unknown operator '", name, "' (e.g. conv2d, matmul, relu)"));
    }
    kinds->Add(static_cast<int>(*kind));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status AddQueryFilters(const RulesOptions& options, rules_db::ListRulesRequest& request) {
  if (absl::Status s = AddKinds("--op", options.ops, request.mutable_any_op_kinds()); !s.ok()) return s;
  if (absl::Status s = AddKinds("--op-all", options.ops_all, request.mutable_all_op_kinds()); !s.ok()) return s;
  if (absl::Status s = AddKinds("--only-ops", options.only_ops, request.mutable_allowed_op_kinds()); !s.ok()) return s;
  request.set_max_ops(options.size);
  request.set_job_id(options.job_id);
  if (options.side == "source") {
    request.set_pattern_side(rules_db::PATTERN_SIDE_SOURCE);
  } else if (options.side == "target") {
    request.set_pattern_side(rules_db::PATTERN_SIDE_TARGET);
  } else if (options.side != "either") {
    return absl::InvalidArgumentError(absl::StrCat("--side '", options.side, "': use source, target or either"));
  }
  if (!options.pattern.empty()) {
    if (auto pattern = RulePattern::Parse(options.pattern); !pattern.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--", pattern.status().message()));  // "--pattern: ..."
    }
    request.set_pattern(options.pattern);
  }
  const auto& known = verifier::AxiomList();
  for (const std::string& axiom : options.axioms) {
    if (std::none_of(known.begin(), known.end(), [&](const verifier::AxiomInfo& a) { return a.name == axiom; })) {
      return absl::InvalidArgumentError(
          absl::StrCat("--axiom: no axiom '", axiom, "' (`taso_verifier axioms list` lists them)"));
    }
    request.add_axioms(axiom);
  }
  return absl::OkStatus();
}

}  // namespace taso::cli
