// Every operator the cpu backend measures runs on oneDNN and gives what the
// float reference interpreter gives: the kernel timed is a correct kernel.
#include "profiler/cpu/cpu_backend.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gtest/gtest.h"
#include "profiler/cpu/calibration.h"
#include "testing/tensor_types.h"

namespace taso::profiler {
namespace {

using ::taso::testing::F32;

// A 2-D tensor stored column-major (the transposed layout of a matmul operand).
TensorType ColumnMajor(int64_t rows, int64_t cols) {
  TensorType t = F32({rows, cols});
  t.strides = {1, rows};
  return t;
}

// Elements of `a` that differ from `want` beyond the comparison's tolerance.
int CountMismatches(const FloatTensor& a, const FloatTensor& want) {
  if (a.data.size() != want.data.size()) return static_cast<int>(std::max(a.data.size(), want.data.size()));
  int mismatches = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    if (std::abs(a.data[i] - want.data[i]) > 1e-4f * (1 + std::abs(want.data[i]))) ++mismatches;
  }
  return mismatches;
}

FloatTensor EvalOrDie(OpKind kind, const OpParams& params, const std::vector<const FloatTensor*>& inputs) {
  auto out = EvalOpFloat(kind, params, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : FloatTensor{};
}

// The comparison must be able to tell a correct conv-with-bias kernel from
// the likely wrong ones. Each wrong result below is what such a kernel would
// output; every one must differ from the right answer somewhere, or the case
// would pass a broken kernel.
void ExpectBiasCaseCatchesWrongKernels(const OpParams& p, const std::vector<FloatTensor>& in,
                                       const FloatTensor& want) {
  const FloatTensor &x = in[0], &w = in[1], &bias = in[2];
  const int64_t cout = bias.type.dims[0];
  const int64_t plane = want.data.size() / (want.type.dims[0] * cout);
  // The bias ignored.
  EXPECT_GT(CountMismatches(EvalOrDie(OpKind::kConv2D, p, {&x, &w}), want), 0) << "ignoring the bias";
  // The bias read in the wrong channel order.
  FloatTensor reversed = bias;
  std::reverse(reversed.data.begin(), reversed.data.end());
  EXPECT_GT(CountMismatches(EvalOrDie(OpKind::kConv2D, p, {&x, &w, &reversed}), want), 0)
      << "misindexing the bias";
  // The bias added after the activation rather than before it.
  if (p.activation != Activation::kNone) {
    FloatTensor late = EvalOrDie(OpKind::kConv2D, p, {&x, &w});
    for (size_t i = 0; i < late.data.size(); ++i) late.data[i] += bias.data[(i / plane) % cout];
    EXPECT_GT(CountMismatches(late, want), 0) << "adding the bias after the activation";
  }
}

class CpuBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto backend = CpuBackend::Create({.threads = 2});
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = backend->release();
  }
  static void TearDownTestSuite() { delete backend_; }

  // Runs `kind` on random inputs on oneDNN and in the interpreter and
  // compares every output element.
  void ExpectMatchesInterpreter(OpKind kind, const OpParams& params, const std::vector<TensorType>& inputs) {
    auto sig = Canonicalize(Signature{kind, params, inputs});
    ASSERT_TRUE(sig.ok()) << sig.status();
    SCOPED_TRACE(sig->key);
    std::vector<FloatTensor> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
      values.push_back(DeterministicFloatTensor(inputs[i], absl::StrCat("in", i), 7));
      if (kind == OpKind::kBatchNorm && i == 4) {
        for (float& v : values.back().data) v = std::abs(v) + 0.1f;
      }
    }
    std::vector<const FloatTensor*> ptrs;
    for (const FloatTensor& v : values) ptrs.push_back(&v);
    auto expected = EvalOpFloat(kind, params, ptrs);
    ASSERT_TRUE(expected.ok()) << expected.status();
    if (kind == OpKind::kConv2D && inputs.size() > 2) {
      ExpectBiasCaseCatchesWrongKernels(params, values, (*expected)[0]);
    }
    auto actual = backend_->Execute(*sig, values);
    ASSERT_TRUE(actual.ok()) << actual.status();
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t o = 0; o < expected->size(); ++o) {
      const FloatTensor& e = (*expected)[o];
      const FloatTensor& a = (*actual)[o];
      EXPECT_EQ(a.type.dims, e.type.dims);
      ASSERT_EQ(a.data.size(), e.data.size());
      const int mismatches = CountMismatches(a, e);
      for (size_t i = 0, shown = 0; i < e.data.size() && shown < 3; ++i) {
        if (std::abs(a.data[i] - e.data[i]) > 1e-4f * (1 + std::abs(e.data[i]))) {
          ++shown;
          ADD_FAILURE() << "output " << o << " element " << i << ": oneDNN " << a.data[i]
                        << ", interpreter " << e.data[i];
        }
      }
      EXPECT_EQ(mismatches, 0);
    }
    // And it can be timed.
    auto m = backend_->Measure(*sig, {.warmup = 1, .repetitions = 3, .min_timed_ms = 0});
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_FALSE(m->kernel.empty());
  }

  static CpuBackend* backend_;
};

CpuBackend* CpuBackendTest::backend_ = nullptr;

// The calibration is part of the device identity (so of every cache key),
// and the backend reports its parameters for the graph cost model.
TEST_F(CpuBackendTest, CalibrationIsPartOfTheDevice) {
  auto calibration = LoadCalibration("");
  ASSERT_TRUE(calibration.ok()) << calibration.status();
  EXPECT_NE(backend_->device().find("; calibration " + calibration->calibration_id()), std::string::npos)
      << backend_->device();
  EXPECT_EQ(backend_->graph_cost_model().per_node_ms(), calibration->per_node_ms());
  auto none = CpuBackend::Create({.threads = 1, .pin_threads = false, .calibration = "none"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_NE((*none)->device(), backend_->device());
  EXPECT_EQ((*none)->graph_cost_model().per_node_ms(), 0);
  auto bad = CpuBackend::Create({.threads = 1, .pin_threads = false, .calibration = "/nonexistent.json"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CpuBackendTest, Conv2D) {
  OpParams p;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 4, 6, 6}), F32({6, 4, 3, 3})});
  p.stride_h = p.stride_w = 2;  // SAME with more padding after than before
  p.activation = Activation::kRelu;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({2, 3, 7, 8}), F32({5, 3, 3, 3})});
  p.padding = Padding::kValid;
  p.activation = Activation::kSigmoid;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 3, 7, 7}), F32({4, 3, 3, 1})});
  p = OpParams();
  p.activation = Activation::kTanh;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 8, 5, 5}), F32({8, 1, 3, 3})});  // depthwise
  p.activation = Activation::kNone;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 4, 5, 5}), F32({6, 2, 1, 1})});  // 2 groups
  // ONNX-style explicit padding: ResNet's stride-2 3x3 with pads 1 on an even input.
  p.padding = Padding::kExplicit;
  p.pads = {1, 1, 1, 1};
  p.stride_h = p.stride_w = 2;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 3, 8, 8}), F32({4, 3, 3, 3})});
  p.pads = {0, 2, 1, 0};
  p.stride_h = p.stride_w = 1;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 3, 6, 7}), F32({4, 3, 3, 3})});
}

// conv2d's optional third input: act(conv(x, w) + bias[oc]).
TEST_F(CpuBackendTest, Conv2DWithBias) {
  OpParams p;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 4, 6, 6}), F32({6, 4, 3, 3}), F32({6})});
  p.activation = Activation::kRelu;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 4, 6, 6}), F32({6, 4, 3, 3}), F32({6})});
  // Strided, SAME with more padding after than before, batch 2.
  p.stride_h = p.stride_w = 2;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({2, 3, 7, 8}), F32({5, 3, 3, 3}), F32({5})});
  p.activation = Activation::kNone;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({2, 3, 7, 8}), F32({5, 3, 3, 3}), F32({5})});
  // Grouped: the bias still has one value per output channel of all groups.
  p = OpParams();
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 4, 5, 5}), F32({6, 2, 3, 3}), F32({6})});
  p.activation = Activation::kRelu;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 4, 5, 5}), F32({6, 2, 3, 3}), F32({6})});
  p.stride_h = p.stride_w = 2;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({2, 6, 9, 9}), F32({9, 2, 3, 3}), F32({9})});  // 3 groups
  p = OpParams();
  p.activation = Activation::kTanh;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 8, 5, 5}), F32({8, 1, 3, 3}), F32({8})});  // depthwise
  // Explicit padding, VALID, and the other activation.
  p.activation = Activation::kSigmoid;
  p.padding = Padding::kExplicit;
  p.pads = {1, 1, 1, 1};
  p.stride_h = p.stride_w = 2;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 3, 8, 8}), F32({4, 3, 3, 3}), F32({4})});
  p = OpParams();
  p.padding = Padding::kValid;
  p.activation = Activation::kRelu;
  ExpectMatchesInterpreter(OpKind::kConv2D, p, {F32({1, 3, 7, 7}), F32({4, 3, 3, 1}), F32({4})});
}

// The bias rides in the convolution's own kernel (oneDNN's bias argument),
// not in a second primitive: same implementation, one step.
TEST_F(CpuBackendTest, Conv2DBiasIsFusedIntoTheConvolution) {
  OpParams p;
  p.activation = Activation::kRelu;
  auto plain = Canonicalize(Signature{OpKind::kConv2D, p, {F32({1, 16, 28, 28}), F32({16, 16, 3, 3})}});
  auto biased = Canonicalize(Signature{OpKind::kConv2D, p, {F32({1, 16, 28, 28}), F32({16, 16, 3, 3}), F32({16})}});
  ASSERT_TRUE(plain.ok() && biased.ok());
  EXPECT_NE(plain->key, biased->key);
  const TimingOptions options{.warmup = 1, .repetitions = 3, .min_timed_ms = 0};
  auto a = backend_->Measure(*plain, options);
  auto b = backend_->Measure(*biased, options);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->kernel, a->kernel);
  EXPECT_EQ(b->kernel.find('+'), std::string::npos) << b->kernel;
}

TEST_F(CpuBackendTest, MatMulInBothLayouts) {
  OpParams p;
  ExpectMatchesInterpreter(OpKind::kMatMul, p, {F32({3, 4}), F32({4, 5})});
  ExpectMatchesInterpreter(OpKind::kMatMul, p, {F32({3, 4}), ColumnMajor(4, 5)});
  ExpectMatchesInterpreter(OpKind::kMatMul, p, {ColumnMajor(3, 4), ColumnMajor(4, 5)});
  p.activation = Activation::kRelu;
  ExpectMatchesInterpreter(OpKind::kMatMul, p, {F32({2, 3, 4}), F32({4, 5})});     // broadcast batch
  ExpectMatchesInterpreter(OpKind::kMatMul, p, {F32({2, 1, 3, 4}), F32({3, 4, 2})});
}

// One oneDNN matmul with its bias and activation, against the
// interpreter's decomposition, for each bias shape Gemm takes.
TEST_F(CpuBackendTest, FusedGemmIsOneMatMulWithBiasAndActivation) {
  OpParams p;
  ExpectMatchesInterpreter(OpKind::kFusedGemm, p, {F32({3, 4}), F32({4, 5}), F32({5})});
  p.activation = Activation::kRelu;
  ExpectMatchesInterpreter(OpKind::kFusedGemm, p, {F32({3, 4}), F32({4, 5}), F32({3, 5})});
  ExpectMatchesInterpreter(OpKind::kFusedGemm, p, {F32({3, 4}), ColumnMajor(4, 5), F32({1, 5})});
  p.activation = Activation::kTanh;
  ExpectMatchesInterpreter(OpKind::kFusedGemm, p, {F32({3, 4}), F32({4, 5}), F32({3, 1})});
  p.activation = Activation::kSigmoid;
  ExpectMatchesInterpreter(OpKind::kFusedGemm, p, {F32({1, 16}), F32({16, 8}), F32({8})});
  auto sig = Canonicalize(Signature{OpKind::kFusedGemm, p, {F32({1, 16}), F32({16, 8}), F32({8})}});
  ASSERT_TRUE(sig.ok()) << sig.status();
  auto m = backend_->Measure(*sig, {.warmup = 1, .repetitions = 3, .min_timed_ms = 0});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->kernel.find('+'), std::string::npos) << "one primitive, not " << m->kernel;
}

TEST_F(CpuBackendTest, Elementwise) {
  OpParams p;
  for (OpKind k : {OpKind::kEwAdd, OpKind::kEwMul}) {
    ExpectMatchesInterpreter(k, p, {F32({2, 3, 4}), F32({2, 3, 4})});
    ExpectMatchesInterpreter(k, p, {F32({2, 3, 4}), F32({4})});
    ExpectMatchesInterpreter(k, p, {F32({3, 1}), F32({2, 3, 5})});  // the first operand broadcasts
    ExpectMatchesInterpreter(k, p, {ColumnMajor(3, 4), ColumnMajor(3, 4)});
  }
  ExpectMatchesInterpreter(OpKind::kScalarMul, p, {F32({2, 5}), F32({})});
  for (OpKind k : {OpKind::kRelu, OpKind::kTanh, OpKind::kSigmoid}) {
    ExpectMatchesInterpreter(k, p, {F32({2, 3, 4})});
    ExpectMatchesInterpreter(k, p, {ColumnMajor(3, 4)});
  }
}

TEST_F(CpuBackendTest, Pooling) {
  OpParams p;
  p.kernel_h = p.kernel_w = 3;
  for (OpKind k : {OpKind::kPoolAvg, OpKind::kPoolMax}) {
    ExpectMatchesInterpreter(k, p, {F32({1, 2, 5, 5})});
    p.stride_h = p.stride_w = 2;
    ExpectMatchesInterpreter(k, p, {F32({2, 3, 6, 7})});
    p.padding = Padding::kValid;
    ExpectMatchesInterpreter(k, p, {F32({1, 2, 7, 6})});
    p.padding = Padding::kSame;
    p.stride_h = p.stride_w = 1;
  }
  p.count_include_pad = false;
  ExpectMatchesInterpreter(OpKind::kPoolAvg, p, {F32({1, 2, 5, 4})});
  p.padding = Padding::kExplicit;
  p.pads = {1, 1, 1, 1};
  p.stride_h = p.stride_w = 2;
  for (OpKind k : {OpKind::kPoolAvg, OpKind::kPoolMax}) ExpectMatchesInterpreter(k, p, {F32({1, 2, 8, 8})});
  p.count_include_pad = true;
  ExpectMatchesInterpreter(OpKind::kPoolAvg, p, {F32({1, 2, 8, 8})});
}

TEST_F(CpuBackendTest, DataMovement) {
  OpParams p;
  p.axis = 1;
  ExpectMatchesInterpreter(OpKind::kConcat, p, {F32({2, 3, 4}), F32({2, 5, 4}), F32({2, 1, 4})});
  p.axis = 0;
  ExpectMatchesInterpreter(OpKind::kConcat, p, {F32({2, 3}), F32({4, 3})});
  p.axis = 1;
  p.sizes = {2, 3};
  ExpectMatchesInterpreter(OpKind::kSplit, p, {F32({2, 5, 3})});
  // A split at a recorded concat point.
  TensorType concatenated = F32({4, 6});
  concatenated.split[1] = MakeSplit(2, nullptr, nullptr);
  p.sizes.clear();
  ExpectMatchesInterpreter(OpKind::kSplit, p, {concatenated});

  OpParams t;
  t.perm = {1, 0};
  ExpectMatchesInterpreter(OpKind::kTranspose, t, {F32({3, 5})});
  t.perm = {0, 2, 1};
  t.shuffle = false;  // a view
  ExpectMatchesInterpreter(OpKind::kTranspose, t, {F32({2, 3, 4})});
  t.perm = {1, 0};
  t.shuffle = true;
  ExpectMatchesInterpreter(OpKind::kTranspose, t, {ColumnMajor(3, 4)});

  OpParams r;
  r.shape = {3, 4};
  ExpectMatchesInterpreter(OpKind::kReshape, r, {F32({2, 6})});
  ExpectMatchesInterpreter(OpKind::kReshape, r, {ColumnMajor(6, 2)});
}

TEST_F(CpuBackendTest, WeightTransformsAndBatchNorm) {
  OpParams e;
  e.kernel_h = 5;
  e.kernel_w = 3;
  ExpectMatchesInterpreter(OpKind::kEnlarge, e, {F32({4, 2, 1, 1})});
  OpParams m;
  m.groups = 4;
  m.count = 2;
  ExpectMatchesInterpreter(OpKind::kMergeGConv, m, {F32({8, 3, 3, 3})});
  OpParams b;
  b.epsilon = 1e-3f;
  ExpectMatchesInterpreter(OpKind::kBatchNorm, b, {F32({2, 3, 4, 4}), F32({3}), F32({3}), F32({3}), F32({3})});
}

TEST_F(CpuBackendTest, ViewsCostNothing) {
  OpParams r;
  r.shape = {6};
  auto sig = Canonicalize(Signature{OpKind::kReshape, r, {F32({2, 3})}});
  ASSERT_TRUE(sig.ok());
  auto m = backend_->Measure(*sig, {});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->median_ms, 0);
  EXPECT_EQ(m->repetitions, 0);
}

TEST_F(CpuBackendTest, MeasuresWithRepetitionsAndNamesTheKernel) {
  OpParams p;
  auto sig = Canonicalize(Signature{OpKind::kConv2D, p, {F32({1, 16, 28, 28}), F32({16, 16, 3, 3})}});
  ASSERT_TRUE(sig.ok());
  auto m = backend_->Measure(*sig, {.warmup = 2, .repetitions = 10, .min_timed_ms = 5});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GE(m->repetitions, 10);
  EXPECT_GT(m->min_ms, 0);
  EXPECT_LE(m->min_ms, m->median_ms);
  EXPECT_FALSE(m->is_estimate);
  EXPECT_FALSE(m->kernel.empty());
  EXPECT_NE(backend_->device().find("oneDNN"), std::string::npos) << backend_->device();
  EXPECT_NE(backend_->device().find("2 threads"), std::string::npos) << backend_->device();
}

TEST_F(CpuBackendTest, UnsupportedSignaturesAreUnimplemented) {
  OpParams p;
  auto ints = Canonicalize(Signature{OpKind::kRelu, p, {TensorType::RowMajor(DType::kInt32, {4})}});
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(backend_->Measure(*ints, {}).status().code(), absl::StatusCode::kUnimplemented);
  auto both = Canonicalize(Signature{OpKind::kEwAdd, p, {F32({3, 1}), F32({1, 4})}});
  ASSERT_TRUE(both.ok());
  auto status = backend_->Measure(*both, {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("both operands broadcast"), std::string::npos) << status;
}

}  // namespace
}  // namespace taso::profiler
