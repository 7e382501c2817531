#include "gpu/cuda_device.h"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gpu/axpy.h"
#include "gtest/gtest.h"

namespace taso::gpu {
namespace {

// Skips the calling test, with the reason, unless a CUDA device is usable.
// On a machine with a GPU this returns normally and the test really runs.
#define TASO_SKIP_WITHOUT_CUDA_DEVICE()                                 \
  do {                                                                  \
    const auto devices_or = ListCudaDevices();                          \
    if (!devices_or.ok()) {                                             \
      GTEST_SKIP() << devices_or.status().message(); \
    }                                                                   \
  } while (0)

// --- Always run: no device needed. ---

TEST(CudaLibraryVersions, ReportsCudnn9AndCuda13Runtime) {
  const CudaLibraryVersionInfo v = GetCudaLibraryVersions();
  EXPECT_GE(v.cudart_runtime, 13000);
  EXPECT_EQ(v.cudnn / 10000, 9) << "cudnnGetVersion() = " << v.cudnn;
  EXPECT_GE(v.cublas_major, 13);

  const std::string s = CudaLibraryVersions();
  std::printf("%s\n", s.c_str());
  // The string carries the same numbers.
  EXPECT_TRUE(absl::StrContains(s, "cuDNN 9.")) << s;
  EXPECT_TRUE(absl::StrContains(s, "(" + std::to_string(v.cudnn) + ",")) << s;
  EXPECT_TRUE(absl::StrContains(s, "CUDA runtime " + std::to_string(v.cudart_runtime / 1000) + ".")) << s;
  EXPECT_TRUE(absl::StrContains(s, "(" + std::to_string(v.cudart_runtime) + ")")) << s;
  EXPECT_TRUE(absl::StrContains(s, "cuBLAS " + std::to_string(v.cublas_major) + ".")) << s;
}

TEST(ListCudaDevices, FailsOnlyAsUnavailableWithCudaErrorText) {
  const auto devices = ListCudaDevices();
  if (devices.ok()) {
    EXPECT_FALSE(devices->empty());
    return;
  }
  EXPECT_EQ(devices.status().code(), absl::StatusCode::kUnavailable) << devices.status();
  EXPECT_TRUE(absl::StartsWith(devices.status().message(), "no usable CUDA device: ")) << devices.status();
}

TEST(RunAxpy, RejectsMismatchedSizes) {
  std::vector<float> x(3, 1.0f), y(4, 1.0f);
  const absl::Status s = RunAxpy(2.0f, x, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(y, std::vector<float>(4, 1.0f));
}

TEST(RunAxpy, EmptyInputIsOk) {
  std::vector<float> x, y;
  EXPECT_TRUE(RunAxpy(2.0f, x, y).ok());
}

TEST(RunAxpy, WithoutDeviceReturnsUnavailable) {
  if (ListCudaDevices().ok()) GTEST_SKIP() << "a CUDA device is present; covered by RunAxpy.MatchesCpuReference";
  std::vector<float> x(8, 1.0f), y(8, 1.0f);
  const absl::Status s = RunAxpy(2.0f, x, y);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_EQ(y, std::vector<float>(8, 1.0f)) << "y must be untouched on failure";
}

// --- Need a device: skip with the reason otherwise. ---

TEST(ListCudaDevices, DescribesEachDevice) {
  TASO_SKIP_WITHOUT_CUDA_DEVICE();
  const auto devices = ListCudaDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_FALSE(devices->empty());
  for (std::size_t i = 0; i < devices->size(); ++i) {
    const DeviceInfo& d = (*devices)[i];
    std::printf("%s\n", d.ToString().c_str());
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.compute_major, 7);  // CUDA 13 targets Turing and newer
    EXPECT_GE(d.compute_minor, 0);
    EXPECT_GT(d.total_memory_bytes, std::size_t{1} << 30);
    EXPECT_GT(d.multiprocessor_count, 0);
  }
}

TEST(RunAxpy, MatchesCpuReference) {
  TASO_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int kN = 1000;
  constexpr float kA = 2.5f;
  std::vector<float> x(kN), y(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = 0.001f * static_cast<float>(i) - 0.5f;
    y[i] = std::sin(static_cast<float>(i));
  }
  std::vector<float> expected(kN);
  for (int i = 0; i < kN; ++i) expected[i] = kA * x[i] + y[i];

  ASSERT_TRUE(RunAxpy(kA, x, y).ok());
  for (int i = 0; i < kN; ++i) {
    // nvcc may contract a*x+y into an FMA, so allow a couple of ulps.
    EXPECT_NEAR(y[i], expected[i], 1e-6f * (1.0f + std::fabs(expected[i]))) << "i=" << i;
  }
}

}  // namespace
}  // namespace taso::gpu
