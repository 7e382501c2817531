#include "gpu/cuda_device.h"

#include <cstddef>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
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

}  // namespace
}  // namespace taso::gpu
