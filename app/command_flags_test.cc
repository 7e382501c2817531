#include "app/command_flags.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(double, test_time_limit, 60, "seconds");
ABSL_FLAG(bool, test_measure, true, "time the result");
ABSL_FLAG(std::string, test_output, "", "output file");
ABSL_FLAG(int32_t, test_instances, 3, "another command's flag");
ABSL_FLAG(std::vector<std::string>, test_ops, {}, "operators");

namespace taso::app {
namespace {

CommandFlags Optimize() {
  return {"taso optimize", "IN.onnx -o OUT.onnx", "Optimizes a model.",
          {"test_time_limit", "test_measure", "test_output", "test_ops"}, {{'o', "test_output"}}};
}

class CommandFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::SetFlag(&FLAGS_test_time_limit, 60);
    absl::SetFlag(&FLAGS_test_measure, true);
    absl::SetFlag(&FLAGS_test_output, "");
    absl::SetFlag(&FLAGS_test_instances, 3);
    absl::SetFlag(&FLAGS_test_ops, {});
  }
};

TEST_F(CommandFlagsTest, SetsFlagsInEverySpelling) {
  ParsedCommand parsed = ParseCommandFlags(
      Optimize(), {"in.onnx", "--test-time-limit", "5", "-o", "out.onnx", "--no-test-measure", "--test_ops=a,b"});
  ASSERT_EQ(parsed.outcome, ParseOutcome::kRun) << parsed.error;
  EXPECT_EQ(parsed.positional, std::vector<std::string>{"in.onnx"});
  EXPECT_EQ(absl::GetFlag(FLAGS_test_time_limit), 5);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_output), "out.onnx");
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_measure));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_ops), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parsed.given.count("test_time_limit"), 1u);
  EXPECT_EQ(parsed.given.count("test_instances"), 0u);
}

TEST_F(CommandFlagsTest, DoubleDashEndsTheFlags) {
  ParsedCommand parsed = ParseCommandFlags(Optimize(), {"--test-measure=false", "--", "--not-a-flag", "-o"});
  ASSERT_EQ(parsed.outcome, ParseOutcome::kRun) << parsed.error;
  EXPECT_EQ(parsed.positional, (std::vector<std::string>{"--not-a-flag", "-o"}));
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_measure));
}

TEST_F(CommandFlagsTest, RefusesAnotherCommandsFlagWithoutSettingIt) {
  ParsedCommand parsed = ParseCommandFlags(Optimize(), {"in.onnx", "--test-instances", "5"});
  EXPECT_EQ(parsed.outcome, ParseOutcome::kError);
  EXPECT_EQ(parsed.error, "--test-instances is not a flag of `taso optimize`");
  EXPECT_EQ(absl::GetFlag(FLAGS_test_instances), 3);
}

TEST_F(CommandFlagsTest, RefusesUnknownFlagsBadValuesAndMissingValues) {
  EXPECT_EQ(ParseCommandFlags(Optimize(), {"--bogus"}).error, "unknown flag --bogus");
  EXPECT_EQ(ParseCommandFlags(Optimize(), {"-x"}).error, "unknown flag -x");
  ParsedCommand bad = ParseCommandFlags(Optimize(), {"--test-time-limit", "abc"});
  EXPECT_EQ(bad.outcome, ParseOutcome::kError);
  EXPECT_EQ(bad.error, "--test-time-limit: 'abc' is not a number");
  EXPECT_EQ(absl::GetFlag(FLAGS_test_time_limit), 60);
  EXPECT_EQ(ParseCommandFlags(Optimize(), {"--test-time-limit"}).error, "--test-time-limit needs a value");
}

TEST_F(CommandFlagsTest, HelpListsOnlyTheCommandsFlagsWithDefaults) {
  EXPECT_EQ(ParseCommandFlags(Optimize(), {"in.onnx", "--bogus=1", "-h"}).outcome, ParseOutcome::kError);
  EXPECT_EQ(ParseCommandFlags(Optimize(), {"in.onnx", "--help"}).outcome, ParseOutcome::kHelp);
  EXPECT_EQ(ParseCommandFlags(Optimize(), {"-h"}).outcome, ParseOutcome::kHelp);
  const std::string help = CommandHelp(Optimize());
  EXPECT_NE(help.find("usage: taso optimize IN.onnx -o OUT.onnx [flags]"), std::string::npos) << help;
  EXPECT_NE(help.find("--test-time-limit=X  (default: 60)"), std::string::npos) << help;
  EXPECT_NE(help.find("-o, --test-output=TEXT"), std::string::npos) << help;
  EXPECT_NE(help.find("--test-measure  (default: true)"), std::string::npos) << help;
  EXPECT_EQ(help.find("test-instances"), std::string::npos) << help;
  EXPECT_EQ(UsageLine(Optimize()), "usage: taso optimize IN.onnx -o OUT.onnx [flags]  (taso optimize --help lists them)");
}

}  // namespace
}  // namespace taso::app
