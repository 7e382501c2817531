// Rules written as text for the verifier's tests (Tensat syntax, ?x@2_4).
#ifndef TASO_VERIFIER_RULE_TEXT_H_
#define TASO_VERIFIER_RULE_TEXT_H_

#include <string>

#include "core/graph_proto.h"
#include "core/rule_sexpr.h"
#include "core/side_conditions.h"
#include "gtest/gtest.h"
#include "proto/rules.pb.h"

namespace taso::verifier::testing {

// The one rule `line` states, named `id` (a gtest failure if it does not parse).
inline rules::Rule ParseRule(const std::string& line, const std::string& id) {
  auto rules = RulesFromSexpr(line);
  EXPECT_TRUE(rules.ok()) << rules.status();
  if (!rules.ok() || rules->size() != 1) return rules::Rule();
  (*rules)[0].set_id(id);
  return (*rules)[0];
}

// A rule marked PROVED with the conditions its own shapes give, as a wrong
// axiom would have proved it.
inline rules::Rule FalselyProved(const std::string& line, const std::string& id) {
  rules::Rule rule = ParseRule(line, id);
  auto source = GraphFromProto(rule.source());
  auto target = GraphFromProto(rule.target());
  EXPECT_TRUE(source.ok() && target.ok());
  if (!source.ok() || !target.ok()) return rule;
  auto s = ConditionsOf(*source);
  auto t = ConditionsOf(*target);
  EXPECT_TRUE(s.ok() && t.ok());
  if (!s.ok() || !t.ok()) return rule;
  *rule.mutable_conditions() = ConditionsToProto({*s, *t});
  rule.set_status(rules::RULE_STATUS_PROVED);
  return rule;
}

}  // namespace taso::verifier::testing

#endif  // TASO_VERIFIER_RULE_TEXT_H_
