// The streamed RuleCollection is byte for byte the message serialized whole,
// and reads back; an empty one is a valid collection too.
#include "cli/rule_collection_writer.h"

#include <sstream>

#include "gtest/gtest.h"

namespace taso::cli {
namespace {

rules::Rule SomeRule(const std::string& id, int nodes) {
  rules::Rule r;
  r.set_id(id);
  r.set_status(rules::RULE_STATUS_PROVED);
  r.set_status_detail(std::string(300, 'd'));  // lengths past one varint byte
  for (int i = 0; i < nodes; ++i) r.mutable_source()->add_nodes()->set_name("n" + std::to_string(i));
  r.mutable_provenance()->set_job_id("job");
  return r;
}

TEST(RuleCollectionWriterTest, WritesTheBytesOfTheWholeMessage) {
  rules::RuleCollection whole;
  whole.set_format_version(1);
  *whole.add_rules() = SomeRule("r1", 3);
  *whole.add_rules() = SomeRule("r2", 200);
  std::ostringstream out;
  RuleCollectionWriter writer(out);
  for (const rules::Rule& r : whole.rules()) writer.Add(r);
  ASSERT_TRUE(writer.Finish());
  EXPECT_EQ(out.str(), whole.SerializeAsString());
  rules::RuleCollection read;
  ASSERT_TRUE(read.ParseFromString(out.str()));
  ASSERT_EQ(read.rules_size(), 2);
  EXPECT_EQ(read.rules(1).source().nodes_size(), 200);
}

TEST(RuleCollectionWriterTest, NoRulesIsACollectionOfNone) {
  std::ostringstream out;
  RuleCollectionWriter writer(out);
  ASSERT_TRUE(writer.Finish());
  rules::RuleCollection read;
  ASSERT_TRUE(read.ParseFromString(out.str()));
  EXPECT_EQ(read.format_version(), 1);
  EXPECT_EQ(read.rules_size(), 0);
}

TEST(RuleCollectionWriterTest, AFailedStreamIsReported) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  RuleCollectionWriter writer(out);
  writer.Add(SomeRule("r1", 1));
  EXPECT_FALSE(writer.Finish());
}

}  // namespace
}  // namespace taso::cli
