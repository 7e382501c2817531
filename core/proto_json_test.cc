#include "core/proto_json.h"

#include "gtest/gtest.h"
#include "proto/optimizer.pb.h"

namespace taso {
namespace {

TEST(ProtoJsonTest, SixtyFourBitFieldsAreNumbersAndEveryFieldIsPrinted) {
  optimizer::Report report;
  report.set_search_time_ms(1234);
  report.set_check_seed(18446744073709551615ULL);
  report.set_cost_after_ms(0.5);
  auto* applied = report.add_rules_applied();
  applied->set_rule_id("r1");
  applied->set_count(3);
  (*report.mutable_unmeasured_operators())["relu"] = "no kernel";
  const Json json = ProtoToJson(report);
  ASSERT_TRUE(json.is_object());
  EXPECT_TRUE(json["search_time_ms"].is_number_integer());
  EXPECT_EQ(json["search_time_ms"].get<int64_t>(), 1234);
  EXPECT_EQ(json["check_seed"].get<uint64_t>(), 18446744073709551615ULL);
  EXPECT_TRUE(json["total_time_ms"].is_number_integer());  // unset, printed as 0
  EXPECT_EQ(json["total_time_ms"].get<int64_t>(), 0);
  EXPECT_DOUBLE_EQ(json["cost_after_ms"].get<double>(), 0.5);
  EXPECT_EQ(json["rules_applied"][0]["rule_id"], "r1");
  EXPECT_TRUE(json["rules_applied"][0]["count"].is_number());
  EXPECT_EQ(json["unmeasured_operators"]["relu"], "no kernel");
}

}  // namespace
}  // namespace taso
