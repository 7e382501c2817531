#include "core/isolated_call.h"

#include <signal.h>
#include <unistd.h>

#include <new>
#include <stdexcept>
#include <string>

#include "gtest/gtest.h"

namespace taso {
namespace {

TEST(RunIsolatedTest, ReturnsWhatTheWorkProduced) {
  const std::string big(3 << 20, 'x');  // more than a pipe holds at once
  auto out = RunIsolated([&]() -> absl::StatusOr<std::string> { return big + "!"; }, absl::Seconds(30), "work");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), big.size() + 1);
  EXPECT_EQ(out->back(), '!');
}

TEST(RunIsolatedTest, PassesTheWorksErrorThrough) {
  auto out = RunIsolated([]() -> absl::StatusOr<std::string> { return absl::InvalidArgumentError("bad model"); },
                         absl::Seconds(30), "work");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "bad model");
}

TEST(RunIsolatedTest, ACrashIsAnErrorNotTheEndOfThisProcess) {
  auto out = RunIsolated(
      []() -> absl::StatusOr<std::string> {
        raise(SIGSEGV);
        return std::string("unreachable");
      },
      absl::Seconds(30), "ONNX shape inference");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kAborted);
  EXPECT_NE(out.status().message().find("ONNX shape inference crashed (signal 11"), std::string::npos)
      << out.status();
}

// An exception must not unwind into this process's code running in the
// child (a test framework would go on running tests there).
TEST(RunIsolatedTest, AnExceptionIsAnErrorAndStaysInTheChild) {
  auto out = RunIsolated([]() -> absl::StatusOr<std::string> { throw std::bad_alloc(); }, absl::Seconds(30), "CBC");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted) << out.status();
  EXPECT_EQ(out.status().message(), "CBC ran out of memory");
  out = RunIsolated([]() -> absl::StatusOr<std::string> { throw std::runtime_error("no"); }, absl::Seconds(30), "CBC");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal) << out.status();
  EXPECT_EQ(out.status().message(), "CBC threw: no");
}

TEST(RunIsolatedTest, AHangIsKilledAtTheTimeout) {
  auto out = RunIsolated(
      []() -> absl::StatusOr<std::string> {
        sleep(60);
        return std::string();
      },
      absl::Milliseconds(300), "work");
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace taso
