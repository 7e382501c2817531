#include "core/json_text.h"

#include "gtest/gtest.h"

namespace taso {
namespace {

TEST(JsonLineTest, KeepsKeyOrderAndSpacing) {
  Json value = {{"job", "a\"b"}, {"graphs", 12}, {"ratio", 0.5}, {"list", {1, 2}}, {"empty", Json::object()}};
  EXPECT_EQ(JsonLine(value), R"({"job": "a\"b", "graphs": 12, "ratio": 0.5, "list": [1, 2], "empty": {}})");
}

TEST(JsonLineTest, EscapesControlCharacters) {
  EXPECT_EQ(JsonLine(Json("x\ny\t\x01")), R"("x\ny\t\u0001")");
}

TEST(JsonLineTest, RoundTo) {
  EXPECT_EQ(JsonLine(Json(RoundTo(1.23456, 3))), "1.235");
  EXPECT_EQ(JsonLine(Json(RoundTo(2.0, 3))), "2.0");
}

}  // namespace
}  // namespace taso
