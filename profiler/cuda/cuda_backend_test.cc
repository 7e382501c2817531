#include "profiler/cuda/cuda_backend.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/interpreter.h"
#include "core/op.h"
#include "core/tensor_type.h"
#include "gtest/gtest.h"
#include "costs/signature.h"
#include "costs/timing.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::ConvParams;
using ::taso::testing::F32;
using ::taso::testing::Strided;
using ::taso::testing::Window;

Signature Sig(OpKind kind, std::vector<TensorType> inputs, OpParams params = {}) {
  Signature s;
  s.kind = kind;
  s.params = std::move(params);
  s.inputs = std::move(inputs);
  return s;
}

// --- Always runs: no device needed. ---

TEST(CreateCudaBackend, ReportsWhyThereIsNoDevice) {
  const auto backend = CreateCudaBackend();
  if (backend.ok()) {
    // A GPU machine: the identity names the device and the libraries.
    const std::string& device = (*backend)->device();
    std::printf("device: %s\n", device.c_str());
    EXPECT_EQ((*backend)->kind(), BACKEND_CUDA);
    EXPECT_TRUE(absl::StrContains(device, "(sm_")) << device;
    EXPECT_TRUE(absl::StrContains(device, "; cuDNN 9.")) << device;
    EXPECT_TRUE(absl::StrContains(device, "; cuBLAS ")) << device;
    return;
  }
  std::printf("%s\n", std::string(backend.status().message()).c_str());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kUnavailable) << backend.status();
  EXPECT_TRUE(absl::StartsWith(backend.status().message(), "no usable CUDA device: ")) << backend.status();
}

TEST(CreateCudaBackend, RejectsAMissingDeviceIndex) {
  const auto backend = CreateCudaBackend(1 << 20);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kUnavailable) << backend.status();
  EXPECT_TRUE(absl::StartsWith(backend.status().message(), "no usable CUDA device: ")) << backend.status();
}

// --- Need a device: skip with the reason otherwise. ---

class CudaBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto backend = CudaBackend::Create(0);
    if (backend.ok()) {
      backend_ = backend->release();
      std::printf("device: %s\n", backend_->device().c_str());
    } else {
      unavailable_ = new absl::Status(backend.status());
    }
  }
  static void TearDownTestSuite() {
    delete backend_;
    backend_ = nullptr;
    delete unavailable_;
    unavailable_ = nullptr;
  }
  void SetUp() override {
    if (backend_ == nullptr) GTEST_SKIP() << unavailable_->message();
  }

  static CanonicalSignature MustCanonicalize(const Signature& signature) {
    auto canonical = Canonicalize(signature);
    EXPECT_TRUE(canonical.ok()) << canonical.status();
    return canonical.ok() ? *canonical : CanonicalSignature{};
  }

  // Runs `signature` on the device and on the reference interpreter with the
  // same random inputs, compares the outputs, then measures it. Returns the
  // measurement for further checks.
  static Measurement Check(const Signature& signature, float tolerance = 1e-4f) {
    const CanonicalSignature canonical = MustCanonicalize(signature);
    if (canonical.key.empty()) return {};
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<FloatTensor> inputs;
    for (size_t i = 0; i < canonical.op.inputs.size(); ++i) {
      FloatTensor t;
      t.type = canonical.op.inputs[i];
      t.data.resize(t.type.num_elements());
      const bool variance = canonical.op.kind == OpKind::kBatchNorm && i == 4;
      for (float& v : t.data) v = variance ? 0.5f + std::fabs(uniform(rng)) : uniform(rng);
      inputs.push_back(std::move(t));
    }
    std::vector<const FloatTensor*> pointers;
    for (const FloatTensor& t : inputs) pointers.push_back(&t);
    const auto want = EvalOpFloat(canonical.op.kind, canonical.op.params, pointers);
    EXPECT_TRUE(want.ok()) << want.status();
    const auto got = backend_->Execute(canonical, inputs);
    EXPECT_TRUE(got.ok()) << canonical.key << ": " << got.status();
    if (!want.ok() || !got.ok()) return {};
    EXPECT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size() && o < want->size(); ++o) {
      const FloatTensor& g = (*got)[o];
      const FloatTensor& w = (*want)[o];
      EXPECT_EQ(g.type.dims, w.type.dims) << canonical.key;
      EXPECT_EQ(g.type.strides, canonical.outputs[o].strides) << canonical.key;
      EXPECT_EQ(g.data.size(), w.data.size()) << canonical.key;
      if (g.data.size() != w.data.size()) continue;
      int mismatches = 0;
      for (size_t i = 0; i < g.data.size(); ++i) {
        if (std::fabs(g.data[i] - w.data[i]) > tolerance * (1.0f + std::fabs(w.data[i]))) {
          if (++mismatches <= 5) {
            ADD_FAILURE() << canonical.key << " output " << o << "[" << i << "]: device " << g.data[i]
                          << ", reference " << w.data[i];
          }
        }
      }
      EXPECT_EQ(mismatches, 0) << canonical.key << " output " << o;
    }

    TimingOptions options;
    options.warmup = 2;
    options.repetitions = 5;
    options.min_timed_ms = 0;
    const auto m = backend_->Measure(canonical, options);
    EXPECT_TRUE(m.ok()) << canonical.key << ": " << m.status();
    if (!m.ok()) return {};
    std::printf("%-70s %-55s %.4f ms\n", canonical.key.c_str(), m->kernel.c_str(), m->median_ms);
    EXPECT_FALSE(m->kernel.empty());
    EXPECT_FALSE(m->is_estimate);
    if (m->kernel != "view") {
      EXPECT_GE(m->repetitions, options.repetitions);
      EXPECT_GT(m->min_ms, 0);
      EXPECT_GT(m->mean_ms, 0);
      EXPECT_GT(m->median_ms, 0);
    }
    return *m;
  }

  static CudaBackend* backend_;
  static absl::Status* unavailable_;
};

CudaBackend* CudaBackendTest::backend_ = nullptr;
absl::Status* CudaBackendTest::unavailable_ = nullptr;

TEST_F(CudaBackendTest, Conv2DReportsTheAlgorithmCuDnnChose) {
  const Measurement m = Check(Sig(OpKind::kConv2D, {F32({2, 4, 9, 9}), F32({8, 4, 3, 3})}, ConvParams(1, Padding::kSame)));
  EXPECT_TRUE(absl::StartsWith(m.kernel, "cudnn ")) << m.kernel;
}

TEST_F(CudaBackendTest, Conv2DPaddingStridesAndAsymmetricSame) {
  Check(Sig(OpKind::kConv2D, {F32({1, 3, 8, 8}), F32({4, 3, 2, 2})}, ConvParams(1, Padding::kSame)));
  Check(Sig(OpKind::kConv2D, {F32({1, 3, 8, 8}), F32({4, 3, 3, 3})}, ConvParams(2, Padding::kSame)));
  Check(Sig(OpKind::kConv2D, {F32({2, 3, 9, 7}), F32({5, 3, 3, 3})}, ConvParams(2, Padding::kValid)));
  Check(Sig(OpKind::kConv2D, {F32({1, 2, 6, 6}), F32({3, 2, 1, 1})}, ConvParams(1, Padding::kSame)));
}

TEST_F(CudaBackendTest, Conv2DGroupsAndDepthwise) {
  Check(Sig(OpKind::kConv2D, {F32({1, 4, 7, 7}), F32({6, 2, 3, 3})}, ConvParams(1, Padding::kSame)));
  Check(Sig(OpKind::kConv2D, {F32({2, 4, 6, 6}), F32({4, 1, 3, 3})}, ConvParams(1, Padding::kSame)));
}

TEST_F(CudaBackendTest, Conv2DActivations) {
  for (Activation a : {Activation::kRelu, Activation::kSigmoid, Activation::kTanh}) {
    Check(Sig(OpKind::kConv2D, {F32({1, 4, 6, 6}), F32({4, 4, 3, 3})}, ConvParams(1, Padding::kSame, a)));
  }
}

// conv2d's optional bias: act(conv(x, w) + bias[oc]). RELU fuses with any
// algorithm and IDENTITY with IMPLICIT_PRECOMP_GEMM
// (cudnnConvolutionBiasActivationForward); tanh and sigmoid, and IDENTITY
// with other algorithms, add the bias with cudnnAddTensor.
TEST_F(CudaBackendTest, Conv2DWithBias) {
  for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kSigmoid, Activation::kTanh}) {
    const Measurement m =
        Check(Sig(OpKind::kConv2D, {F32({2, 4, 9, 9}), F32({8, 4, 3, 3}), F32({8})}, ConvParams(1, Padding::kSame, a)));
    EXPECT_TRUE(absl::StartsWith(m.kernel, "cudnn ")) << m.kernel;
    const bool fused = absl::StrContains(m.kernel, "fused bias+");
    EXPECT_NE(fused, absl::StrContains(m.kernel, "cudnnAddTensor bias")) << m.kernel;
    if (a == Activation::kSigmoid || a == Activation::kTanh) {
      EXPECT_FALSE(fused) << m.kernel;
    }
    if (a == Activation::kNone && fused) {
      EXPECT_TRUE(absl::StrContains(m.kernel, "IMPLICIT_PRECOMP_GEMM")) << m.kernel;
    }
  }
  // Strided with asymmetric SAME padding, grouped, depthwise.
  Check(Sig(OpKind::kConv2D, {F32({1, 3, 8, 8}), F32({4, 3, 3, 3}), F32({4})}, ConvParams(2, Padding::kSame, Activation::kRelu)));
  Check(Sig(OpKind::kConv2D, {F32({1, 4, 7, 7}), F32({6, 2, 3, 3}), F32({6})}, ConvParams(1, Padding::kSame, Activation::kRelu)));
  Check(Sig(OpKind::kConv2D, {F32({1, 4, 7, 7}), F32({6, 2, 3, 3}), F32({6})}, ConvParams(2, Padding::kValid)));
  Check(Sig(OpKind::kConv2D, {F32({2, 4, 6, 6}), F32({4, 1, 3, 3}), F32({4})}, ConvParams(1, Padding::kSame, Activation::kTanh)));
}

TEST_F(CudaBackendTest, Conv2DRejectsAStridedBias) {
  const CanonicalSignature s =
      MustCanonicalize(Sig(OpKind::kConv2D, {F32({1, 3, 8, 8}), F32({4, 3, 3, 3}), Strided({4}, {2})}));
  const auto m = backend_->Measure(s, TimingOptions{});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
  EXPECT_TRUE(absl::StrContains(m.status().message(), "bias")) << m.status();
}

TEST_F(CudaBackendTest, Conv2DChannelsLastInput) {
  // (N,C,H,W) = (1,3,5,5) stored NHWC.
  Check(Sig(OpKind::kConv2D, {Strided({1, 3, 5, 5}, {75, 1, 15, 3}), F32({4, 3, 3, 3})}, ConvParams(1, Padding::kSame)));
}

TEST_F(CudaBackendTest, MatMulLayoutsAndBatches) {
  Check(Sig(OpKind::kMatMul, {F32({5, 7}), F32({7, 3})}));
  Check(Sig(OpKind::kMatMul, {F32({3, 5, 7}), F32({3, 7, 4})}));
  Check(Sig(OpKind::kMatMul, {F32({2, 5, 7}), F32({7, 3})}));      // y broadcast over the batch
  Check(Sig(OpKind::kMatMul, {F32({1, 5, 7}), F32({4, 7, 3})}));   // x broadcast (batch 1)
  Check(Sig(OpKind::kMatMul, {Strided({5, 7}, {1, 5}), F32({7, 3})}));   // column-major x
  Check(Sig(OpKind::kMatMul, {F32({5, 7}), Strided({7, 3}, {1, 7})}));   // column-major y
  Check(Sig(OpKind::kMatMul, {Strided({3, 5, 7}, {35, 1, 5}), Strided({3, 7, 2}, {14, 1, 7})}));
  Check(Sig(OpKind::kMatMul, {F32({5, 1}), F32({1, 4})}));
}

TEST_F(CudaBackendTest, MatMulActivations) {
  for (Activation a : {Activation::kRelu, Activation::kSigmoid, Activation::kTanh}) {
    OpParams p;
    p.activation = a;
    Check(Sig(OpKind::kMatMul, {F32({2, 4, 6}), F32({2, 6, 5})}, p));
  }
}

TEST_F(CudaBackendTest, MatMulRejectsAnUnsupportedLayout) {
  // Every other element of each row: neither row- nor column-major.
  const CanonicalSignature s = MustCanonicalize(Sig(OpKind::kMatMul, {Strided({4, 6}, {12, 2}), F32({6, 3})}));
  const auto m = backend_->Measure(s, TimingOptions{});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
}

TEST_F(CudaBackendTest, Pooling) {
  for (bool include : {true, false}) {
    OpParams asym = Window(3, 3, 2, Padding::kSame);  // 6 -> 3: pads 0 before, 1 after
    asym.count_include_pad = include;
    Check(Sig(OpKind::kPoolAvg, {F32({1, 2, 6, 6})}, asym));
    OpParams sym = Window(3, 3, 1, Padding::kSame);
    sym.count_include_pad = include;
    Check(Sig(OpKind::kPoolAvg, {F32({2, 3, 5, 5})}, sym));
    OpParams even = Window(2, 2, 1, Padding::kSame);
    even.count_include_pad = include;
    Check(Sig(OpKind::kPoolAvg, {F32({1, 2, 5, 4})}, even));
  }
  Check(Sig(OpKind::kPoolMax, {F32({1, 2, 6, 6})}, Window(3, 3, 2, Padding::kSame)));
  Check(Sig(OpKind::kPoolMax, {F32({1, 2, 7, 7})}, Window(3, 3, 1, Padding::kSame)));
  Check(Sig(OpKind::kPoolMax, {F32({2, 2, 8, 8})}, Window(2, 2, 2, Padding::kValid)));
  Check(Sig(OpKind::kPoolAvg, {Strided({1, 3, 4, 4}, {48, 1, 12, 3})}, Window(2, 2, 2, Padding::kValid)));
}

TEST_F(CudaBackendTest, Activations) {
  for (OpKind kind : {OpKind::kRelu, OpKind::kTanh, OpKind::kSigmoid}) {
    Check(Sig(kind, {F32({2, 3, 4})}));
    Check(Sig(kind, {Strided({4, 6}, {1, 4})}));
  }
}

TEST_F(CudaBackendTest, ElementwiseWithBroadcasting) {
  for (OpKind kind : {OpKind::kEwAdd, OpKind::kEwMul}) {
    Check(Sig(kind, {F32({2, 3, 4, 5}), F32({2, 3, 4, 5})}));
    Check(Sig(kind, {F32({2, 3, 4, 5}), F32({3, 1, 1})}));  // second operand broadcast
    Check(Sig(kind, {F32({5}), F32({2, 3, 5})}));           // first operand broadcast
    Check(Sig(kind, {F32({2, 1, 4}), F32({3, 1})}));        // both broadcast
    Check(Sig(kind, {Strided({4, 6}, {1, 4}), Strided({4, 6}, {1, 4})}));
    Check(Sig(kind, {Strided({4, 6}, {1, 4}), F32({4, 6})}));
  }
  // Rank 6, folded to cuDNN's 5 dimensions where contiguous.
  Check(Sig(OpKind::kEwAdd, {F32({2, 3, 2, 2, 3, 4}), F32({3, 1, 1, 3, 4})}));
  Check(Sig(OpKind::kScalarMul, {F32({3, 4}), F32({})}));
  Check(Sig(OpKind::kScalarMul, {Strided({3, 4}, {1, 3}), F32({})}));
}

TEST_F(CudaBackendTest, ConcatAndSplit) {
  OpParams axis1;
  axis1.axis = 1;
  Check(Sig(OpKind::kConcat, {F32({2, 3, 4}), F32({2, 5, 4}), F32({2, 1, 4})}, axis1));
  Check(Sig(OpKind::kConcat, {F32({2, 3}), Strided({2, 4}, {1, 2})}, axis1));
  OpParams axis0;
  Check(Sig(OpKind::kConcat, {F32({2, 3}), F32({4, 3})}, axis0));
  OpParams split = axis1;
  split.sizes = {2, 3, 1};
  Check(Sig(OpKind::kSplit, {F32({2, 6, 3})}, split));
  Check(Sig(OpKind::kSplit, {Strided({2, 6, 3}, {1, 2, 12})}, split));  // stored column-major
  OpParams last;
  last.axis = 2;
  Check(Sig(OpKind::kConcat, {F32({2, 3, 4}), F32({2, 3, 1})}, last));
  OpParams first;
  first.sizes = {1, 3};
  Check(Sig(OpKind::kSplit, {F32({4, 5})}, first));
}

TEST_F(CudaBackendTest, TransposeCopiesOnlyWhenShuffling) {
  OpParams shuffle;
  shuffle.perm = {0, 2, 3, 1};
  Check(Sig(OpKind::kTranspose, {F32({2, 3, 4, 5})}, shuffle));
  OpParams swap;
  swap.perm = {1, 0};
  Check(Sig(OpKind::kTranspose, {Strided({3, 4}, {1, 3})}, swap));
  OpParams view = shuffle;
  view.shuffle = false;
  const Measurement m = Check(Sig(OpKind::kTranspose, {F32({2, 3, 4, 5})}, view));
  EXPECT_EQ(m.kernel, "view");
  EXPECT_EQ(m.repetitions, 0);
  EXPECT_EQ(m.mean_ms, 0);
}

TEST_F(CudaBackendTest, ReshapeIsAViewOfRowMajorData) {
  OpParams p;
  p.shape = {6, 4};
  const Measurement view = Check(Sig(OpKind::kReshape, {F32({2, 3, 4})}, p));
  EXPECT_EQ(view.kernel, "view");
  EXPECT_EQ(view.repetitions, 0);
  const Measurement copy = Check(Sig(OpKind::kReshape, {Strided({4, 6}, {1, 4})}, p));
  EXPECT_NE(copy.kernel, "view");
}

TEST_F(CudaBackendTest, BatchNorm) {
  OpParams p;
  p.epsilon = 1e-3f;
  Check(Sig(OpKind::kBatchNorm, {F32({2, 3, 4, 5}), F32({3}), F32({3}), F32({3}), F32({3})}, p));
  Check(Sig(OpKind::kBatchNorm, {F32({4, 3}), F32({3}), F32({3}), F32({3}), F32({3})}, p));
}

TEST_F(CudaBackendTest, WeightTransforms) {
  Check(Sig(OpKind::kEnlarge, {F32({4, 2, 1, 1})}, Window(3, 3, 1, Padding::kSame)));
  Check(Sig(OpKind::kEnlarge, {F32({3, 2, 3, 3})}, Window(5, 5, 1, Padding::kSame)));
  Check(Sig(OpKind::kEnlarge, {F32({2, 2, 1, 3})}, Window(3, 3, 1, Padding::kSame)));
  for (int count : {1, 2, 4}) {
    OpParams p;
    p.groups = 4;
    p.count = count;
    Check(Sig(OpKind::kMergeGConv, {F32({8, 2, 3, 3})}, p));
  }
}

TEST_F(CudaBackendTest, OnlyFloat32IsSupported) {
  TensorType i32 = TensorType::RowMajor(DType::kInt32, {2, 3});
  const CanonicalSignature s = MustCanonicalize(Sig(OpKind::kRelu, {i32}));
  const auto m = backend_->Measure(s, TimingOptions{});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
  FloatTensor input;
  input.type = i32;
  input.data.assign(6, 1.0f);
  const auto e = backend_->Execute(s, {input});
  EXPECT_EQ(e.status().code(), absl::StatusCode::kUnimplemented) << e.status();
}

TEST_F(CudaBackendTest, EmptyTensorsCostNothing) {
  const CanonicalSignature s = MustCanonicalize(Sig(OpKind::kRelu, {F32({0, 3})}));
  const auto m = backend_->Measure(s, TimingOptions{});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->kernel, "empty");
  EXPECT_EQ(m->repetitions, 0);
}

TEST_F(CudaBackendTest, OpaqueOperatorsAreUnimplemented) {
  OpParams p;
  p.opaque.op_type = "Softmax";
  p.opaque.output_types = {F32({2, 3})};
  const CanonicalSignature s = MustCanonicalize(Sig(OpKind::kOpaque, {F32({2, 3})}, p));
  const auto m = backend_->Measure(s, TimingOptions{});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnimplemented) << m.status();
}

}  // namespace
}  // namespace taso::profiler
