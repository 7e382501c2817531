#include "optimizer/rule_source.h"

#include <cstdlib>
#include <fstream>

#include "core/proof_signature.h"
#include "gmock/gmock.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gtest/gtest.h"
#include "rules/builtin_rules.h"

namespace taso::optimizer {
namespace {

using ::testing::HasSubstr;

rules::RuleCollection Builtin() {
  rules::RuleCollection collection;
  const absl::string_view bytes = builtin_rules::DefaultRuleCollection();
  EXPECT_TRUE(collection.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  return collection;
}

std::string Write(const rules::RuleCollection& collection, const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << collection.SerializeAsString();
  return path;
}

TEST(RuleSourceTest, ACollectionReadsInChunksAsItWasWritten) {
  rules::RuleCollection whole = Builtin();
  ASSERT_GT(whole.rules_size(), 100);
  std::string bytes = whole.SerializeAsString();
  // A field this build does not know is skipped, wherever it comes.
  bytes += std::string("\xf8\x06\x2a", 3);  // field 111, varint 42
  for (int64_t chunk : {int64_t{1}, int64_t{1000}, int64_t{256} << 20}) {
    google::protobuf::io::ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()), 64);
    rules::RuleCollection read;
    ASSERT_TRUE(ParseRuleCollection(&in, &read, chunk)) << chunk;
    EXPECT_EQ(read.SerializeAsString(), whole.SerializeAsString()) << chunk;
  }
  // Cut short inside a rule, or not a collection at all.
  const std::string cut = bytes.substr(0, bytes.size() / 2);
  google::protobuf::io::ArrayInputStream short_in(cut.data(), static_cast<int>(cut.size()));
  rules::RuleCollection read;
  EXPECT_FALSE(ParseRuleCollection(&short_in, &read, 1000));
  const std::string junk = "\x0a\xff\xff\xff\xff\x0f";
  google::protobuf::io::ArrayInputStream junk_in(junk.data(), static_cast<int>(junk.size()));
  EXPECT_FALSE(ParseRuleCollection(&junk_in, &read));
}

// The first recorded signature with a parameter, or null.
rules::ProofSignature* PlainSignature(rules::RuleCollection& collection) {
  for (rules::Rule& rule : *collection.mutable_rules()) {
    for (rules::NodeCondition& node : *rule.mutable_conditions()->mutable_source()) {
      for (rules::ProofSignature& sig : *node.mutable_signatures()) {
        if (sig.params_size() > 0) return &sig;  // parameter 0 is never one a proof opens
      }
    }
  }
  return nullptr;
}

// The built-in set passes the same check a file gets: the binary relies on
// this test rather than re-checking its own rules at every start.
TEST(RuleSourceTest, TheBuiltInSetLoadsFromAFile) {
  auto set = LoadRulesFile(Write(Builtin(), "builtin.pb"));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_GT(set->rewrites.size(), 1000u);
  EXPECT_EQ(set->unusable, 0);
  EXPECT_EQ(set->provenance.proved_rules, Builtin().rules_size());
}

TEST(RuleSourceTest, ARuleEditedAfterItsProofIsRefused) {
  // Its sides swapped: still a true rule, but not the one proved under its id.
  rules::RuleCollection collection = Builtin();
  rules::Rule& rule = *collection.mutable_rules(0);
  ir::Graph source = rule.source();
  *rule.mutable_source() = rule.target();
  *rule.mutable_target() = source;
  auto set = LoadRulesFile(Write(collection, "edited.pb"));
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("does not have its content's id"));
  EXPECT_THAT(set.status().message(), HasSubstr("edited.pb"));
}

TEST(RuleSourceTest, AConditionOpenedThatNoProofLeavesOpenIsRefused) {
  rules::RuleCollection collection = Builtin();
  rules::ProofSignature* sig = PlainSignature(collection);
  ASSERT_NE(sig, nullptr);
  sig->set_params(0, FactVariable(0));  // the conditions are not part of the id
  auto set = LoadRulesFile(Write(collection, "widened.pb"));
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("which no proof here leaves open"));
}

TEST(RuleSourceTest, AProofUnderAnAxiomSetThisBuildDoesNotKnowIsRefused) {
  rules::RuleCollection collection = Builtin();
  collection.mutable_rules(3)->mutable_proof()->set_axiom_set_version("axioms-70-000000000000");
  auto set = LoadRulesFile(Write(collection, "other_axioms.pb"));
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("axioms-70-000000000000"));
  EXPECT_THAT(set.status().message(), HasSubstr("does not know"));
}

TEST(RuleSourceTest, TheDigestFollowsWhatRulesMeanNotWhereTheyWereStored) {
  const rules::RuleCollection builtin = Builtin();
  const std::string digest = RuleContentDigest(builtin);
  rules::RuleCollection restored = builtin;
  restored.mutable_rules(0)->set_revision(builtin.rules(0).revision() + 7);
  restored.mutable_rules(0)->mutable_provenance()->set_job_id("another job");
  EXPECT_EQ(RuleContentDigest(restored), digest);
  rules::RuleCollection changed = builtin;
  rules::ProofSignature* sig = PlainSignature(changed);
  ASSERT_NE(sig, nullptr);
  sig->set_params(0, sig->params(0) + 1);
  EXPECT_NE(RuleContentDigest(changed), digest);
}

}  // namespace
}  // namespace taso::optimizer
