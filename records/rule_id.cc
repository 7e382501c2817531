#include "records/rule_id.h"

#include "absl/strings/str_cat.h"
#include "core/canonical.h"
#include "core/graph_proto.h"
#include "core/hash.h"

namespace taso::records {

absl::StatusOr<std::string> RuleIdOf(const Graph& source, const Graph& target,
                                     const std::vector<std::pair<int, int>>& outputs) {
  auto s = CanonicalText(source);
  if (!s.ok()) return s.status();
  auto t = CanonicalText(target);
  if (!t.ok()) return t.status();
  return RuleIdOfTexts(*s, *t, outputs);
}

std::string RuleIdOfTexts(std::string_view source_text, std::string_view target_text,
                          const std::vector<std::pair<int, int>>& outputs) {
  Hasher h;
  h.AddString(source_text);
  h.AddString(target_text);
  for (const auto& [source_output, target_output] : outputs) {
    h.AddSigned(source_output);
    h.AddSigned(target_output);
  }
  return "r" + h.Finish().ToHex().substr(0, 16);
}

absl::StatusOr<std::string> RuleId(const rules::Rule& rule) {
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return absl::InvalidArgumentError(absl::StrCat("source graph: ", source.status().message()));
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return absl::InvalidArgumentError(absl::StrCat("target graph: ", target.status().message()));
  std::vector<std::pair<int, int>> outputs;
  for (const auto& p : rule.outputs()) outputs.emplace_back(p.source_output(), p.target_output());
  return RuleIdOf(*source, *target, outputs);
}

}  // namespace taso::records
