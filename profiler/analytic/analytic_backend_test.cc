#include "profiler/analytic/analytic_backend.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "costs/signature_test_util.h"
#include "gtest/gtest.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::F32;

// A 3x3 convolution from ResNet's second stage: ~1000 FLOPs per byte moved.
CanonicalSignature Conv3x3(int64_t batch) {
  OpParams p;
  p.activation = Activation::kRelu;
  return MustCanonicalize(OpKind::kConv2D, p, {F32({batch, 256, 56, 56}), F32({256, 256, 3, 3})});
}

CanonicalSignature Relu(int64_t batch) {
  return MustCanonicalize(OpKind::kRelu, {}, {F32({batch, 256, 56, 56})});
}

std::unique_ptr<MeasureBackend> MustCreate(const std::string& device) {
  auto backend = CreateAnalyticBackend(device);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

double EstimateMs(MeasureBackend& backend, const CanonicalSignature& s) {
  auto m = backend.Measure(s, TimingOptions{});
  EXPECT_TRUE(m.ok()) << s.key << ": " << m.status();
  return m.ok() ? m->mean_ms : -1;
}

TEST(AnalyticBackendTest, EveryDeviceGivesPositiveMarkedEstimates) {
  for (const std::string& name : AnalyticDeviceNames()) {
    SCOPED_TRACE(name);
    auto backend = MustCreate(name);
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->kind(), BACKEND_ANALYTIC);
    EXPECT_TRUE(absl::StartsWith(backend->device(), "analytic ")) << backend->device();
    for (const CanonicalSignature& s : {Conv3x3(1), Relu(1)}) {
      auto m = backend->Measure(s, TimingOptions{});
      ASSERT_TRUE(m.ok()) << m.status();
      EXPECT_GT(m->mean_ms, 0);
      EXPECT_EQ(m->median_ms, m->mean_ms);
      EXPECT_EQ(m->min_ms, m->mean_ms);
      EXPECT_EQ(m->stddev_ms, 0);
      EXPECT_EQ(m->repetitions, 0);
      EXPECT_TRUE(m->is_estimate);
      EXPECT_TRUE(absl::StartsWith(m->kernel, "roofline: ")) << m->kernel;
    }
  }
}

TEST(AnalyticBackendTest, TableDevicesNameTheirDatasheetFigures) {
  auto backend = MustCreate("h100");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->device(), "analytic H100 SXM (67 TFLOP/s fp32, 3350 GB/s, 4 us launch)");
  // Names are case-insensitive.
  auto upper = MustCreate("A100");
  ASSERT_NE(upper, nullptr);
  EXPECT_TRUE(absl::StrContains(upper->device(), "A100 SXM 40GB")) << upper->device();
}

TEST(AnalyticBackendTest, EstimatesGrowWithProblemSize) {
  for (const char* name : {"t4", "h100", "cpu"}) {
    SCOPED_TRACE(name);
    auto backend = MustCreate(name);
    ASSERT_NE(backend, nullptr);
    EXPECT_LT(EstimateMs(*backend, Conv3x3(1)), EstimateMs(*backend, Conv3x3(8)));
    EXPECT_LT(EstimateMs(*backend, Relu(1)), EstimateMs(*backend, Relu(8)));
  }
}

TEST(AnalyticBackendTest, BigConvIsComputeBoundAndReluMemoryBound) {
  for (const char* name : {"h100", "cpu"}) {
    SCOPED_TRACE(name);
    auto backend = MustCreate(name);
    ASSERT_NE(backend, nullptr);
    auto conv = backend->Measure(Conv3x3(8), TimingOptions{});
    ASSERT_TRUE(conv.ok()) << conv.status();
    EXPECT_TRUE(absl::EndsWith(conv->kernel, ", compute-bound")) << conv->kernel;
    auto relu = backend->Measure(Relu(8), TimingOptions{});
    ASSERT_TRUE(relu.ok()) << relu.status();
    EXPECT_TRUE(absl::EndsWith(relu->kernel, ", memory-bound")) << relu->kernel;
  }
  auto h100 = MustCreate("h100");
  ASSERT_NE(h100, nullptr);
  auto conv = h100->Measure(Conv3x3(8), TimingOptions{});
  ASSERT_TRUE(conv.ok());
  EXPECT_EQ(conv->kernel, "roofline: H100 SXM, compute-bound");
}

TEST(AnalyticBackendTest, H100IsFasterThanT4OnTheSameConv) {
  auto h100 = MustCreate("h100");
  auto t4 = MustCreate("t4");
  ASSERT_NE(h100, nullptr);
  ASSERT_NE(t4, nullptr);
  EXPECT_LT(EstimateMs(*h100, Conv3x3(8)), EstimateMs(*t4, Conv3x3(8)));
}

// conv2d's optional bias is added inside the convolution: it costs a hair
// more than the conv alone and clearly less than the conv followed by the
// separate broadcast ewadd it replaces.
TEST(AnalyticBackendTest, ConvBiasCostsAboutTheConvAndLessThanASeparateAdd) {
  OpParams relu;
  relu.activation = Activation::kRelu;
  for (const OpParams& p : {OpParams{}, relu}) {
    const CanonicalSignature conv = MustCanonicalize(OpKind::kConv2D, p, {F32({1, 64, 56, 56}), F32({64, 64, 3, 3})});
    const CanonicalSignature biased =
        MustCanonicalize(OpKind::kConv2D, p, {F32({1, 64, 56, 56}), F32({64, 64, 3, 3}), F32({64})});
    const CanonicalSignature add = MustCanonicalize(OpKind::kEwAdd, {}, {F32({1, 64, 56, 56}), F32({64, 1, 1})});
    EXPECT_EQ(SignatureFlops(biased), SignatureFlops(conv) + 64 * 56 * 56);
    EXPECT_EQ(SignatureBytes(biased), SignatureBytes(conv) + 64 * 4);
    for (const char* name : {"t4", "h100", "cpu"}) {
      SCOPED_TRACE(name);
      auto backend = MustCreate(name);
      ASSERT_NE(backend, nullptr);
      const double c = EstimateMs(*backend, conv), b = EstimateMs(*backend, biased), a = EstimateMs(*backend, add);
      EXPECT_GT(b, c);
      EXPECT_LT(b, 1.01 * c);
      EXPECT_LT(b, c + a);
    }
  }
}

TEST(AnalyticBackendTest, ViewsAndConstantsCostNothing) {
  auto backend = MustCreate("v100");
  ASSERT_NE(backend, nullptr);
  OpParams strides_only;
  strides_only.perm = {1, 0};
  strides_only.shuffle = false;
  EXPECT_EQ(EstimateMs(*backend, MustCanonicalize(OpKind::kTranspose, strides_only, {F32({64, 32})})), 0);
  OpParams flatten;
  flatten.shape = {8, 2048};
  EXPECT_EQ(EstimateMs(*backend, MustCanonicalize(OpKind::kReshape, flatten, {F32({8, 2048, 1, 1})})), 0);
  OpParams ones;
  ones.shape = {64, 64};
  EXPECT_EQ(EstimateMs(*backend, MustCanonicalize(OpKind::kConstOnes, ones, {})), 0);

  // A transpose that rewrites memory does cost time.
  OpParams shuffled = strides_only;
  shuffled.shuffle = true;
  EXPECT_GT(EstimateMs(*backend, MustCanonicalize(OpKind::kTranspose, shuffled, {F32({64, 32})})), 0);
  // So does a split whose parts are strided slices of the input.
  OpParams halves;
  halves.axis = 1;
  halves.sizes = {16, 16};
  EXPECT_GT(EstimateMs(*backend, MustCanonicalize(OpKind::kSplit, halves, {F32({64, 32})})), 0);
}

TEST(AnalyticBackendTest, OpaqueOperatorsAreUnimplemented) {
  auto backend = MustCreate("t4");
  ASSERT_NE(backend, nullptr);
  OpParams p;
  p.opaque.op_type = "Softmax";
  p.opaque.output_types = {F32({1, 1000})};
  auto m = backend->Measure(MustCanonicalize(OpKind::kOpaque, p, {F32({1, 1000})}), TimingOptions{});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
}

TEST(AnalyticBackendTest, UnknownDeviceIsInvalidArgument) {
  auto backend = CreateAnalyticBackend("tpu-v9");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument);
  for (const std::string& name : AnalyticDeviceNames()) {
    EXPECT_TRUE(absl::StrContains(backend.status().message(), name)) << backend.status();
  }
}

TEST(AnalyticBackendTest, CpuCalibrationIsPlausibleAndItsDeviceStringStable) {
  auto cpu = LookupAnalyticDevice("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  std::printf("calibrated cpu: %s\n  bandwidth %.2f GB/s, fp32 peak %.2f GFLOP/s, launch %.1f us\n",
              cpu->device_string.c_str(), cpu->bandwidth_bytes / 1e9, cpu->peak_flops / 1e9,
              cpu->launch_overhead_ms * 1e3);
  EXPECT_GT(cpu->bandwidth_bytes, 0.5e9);
  EXPECT_GT(cpu->peak_flops, 1e9);
  EXPECT_GT(cpu->launch_overhead_ms, 0);
  EXPECT_LT(cpu->launch_overhead_ms, 0.02);
  EXPECT_TRUE(absl::StartsWith(cpu->device_string, "analytic cpu: ")) << cpu->device_string;
  EXPECT_TRUE(absl::EndsWith(cpu->device_string, " cores") ||
              absl::EndsWith(cpu->device_string, " core"))
      << cpu->device_string;
  // The device string carries no measured figure, so it cannot drift.
  auto again = LookupAnalyticDevice("cpu");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->device_string, cpu->device_string);
  std::printf("  conv3x3 [8,256,56,56] estimate %.3f ms, relu estimate %.3f ms\n",
              EstimateMs(*MustCreate("cpu"), Conv3x3(8)), EstimateMs(*MustCreate("cpu"), Relu(8)));
}

}  // namespace
}  // namespace taso::profiler
