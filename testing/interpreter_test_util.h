// Helpers shared by the interpreter tests: tiny tensors and one-line
// operator evaluation in both value domains, over testing/'s shorthands.
// Test-only; core's interpreter tests use it.
#ifndef TASO_TESTING_INTERPRETER_TEST_UTIL_H_
#define TASO_TESTING_INTERPRETER_TEST_UTIL_H_

#include "core/interpreter.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/op_params.h"
#include "testing/tensor_types.h"
#include "testing/tensors.h"

namespace taso::testing_util {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

using Dims = std::vector<int64_t>;
using IV = std::vector<int32_t>;
using FV = std::vector<float>;

inline constexpr int32_t kIntMax = std::numeric_limits<int32_t>::max();
inline constexpr int32_t kIntMin = std::numeric_limits<int32_t>::min();

using ::taso::testing::Axis;
using ::taso::testing::ConvParams;
using ::taso::testing::F32;
using ::taso::testing::Kernel;
using ::taso::testing::Perm;
using ::taso::testing::ShapeParam;
using ::taso::testing::WithActivation;

inline IntTensor IT(Dims dims, IV data) { return ::taso::testing::IntTensorOf(std::move(dims), std::move(data)); }
inline FloatTensor FT(Dims dims, FV data) { return ::taso::testing::FloatTensorOf(std::move(dims), std::move(data)); }

// Same integer literals as float values (all small, so exact in float).
inline FloatTensor ToF(const IntTensor& t) {
  FloatTensor f;
  f.type = t.type;
  for (int32_t v : t.data) f.data.push_back(static_cast<float>(v));
  return f;
}
inline FV ToFV(const IV& v) {
  FV f;
  for (int32_t x : v) f.push_back(static_cast<float>(x));
  return f;
}

inline auto Near(const FV& expected) { return Pointwise(FloatNear(1e-5f), expected); }

inline std::vector<IntTensor> EvalI(OpKind kind, const OpParams& p, std::vector<const IntTensor*> in,
                             IntOptions options = {}) {
  auto r = EvalOpInt(kind, p, in, options);
  EXPECT_TRUE(r.ok()) << OpKindName(kind) << " (int): " << r.status();
  return r.ok() ? *r : std::vector<IntTensor>{};
}
inline std::vector<FloatTensor> EvalF(OpKind kind, const OpParams& p, std::vector<const FloatTensor*> in) {
  auto r = EvalOpFloat(kind, p, in);
  EXPECT_TRUE(r.ok()) << OpKindName(kind) << " (float): " << r.status();
  return r.ok() ? *r : std::vector<FloatTensor>{};
}
inline IntTensor EvalI1(OpKind kind, const OpParams& p, std::vector<const IntTensor*> in, IntOptions options = {}) {
  auto v = EvalI(kind, p, std::move(in), options);
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? IntTensor{} : v[0];
}
inline FloatTensor EvalF1(OpKind kind, const OpParams& p, std::vector<const FloatTensor*> in) {
  auto v = EvalF(kind, p, std::move(in));
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? FloatTensor{} : v[0];
}

// Runs a one-output operator in both interpreters on the same integer
// literals and checks both against the same hand-computed result (for the
// operators whose int and float semantics agree on small integers).
inline void ExpectBoth(OpKind kind, const OpParams& p, const std::vector<IntTensor>& in, const Dims& out_dims,
                const IV& expected) {
  std::vector<const IntTensor*> ip;
  std::vector<FloatTensor> fin;
  for (const IntTensor& t : in) {
    ip.push_back(&t);
    fin.push_back(ToF(t));
  }
  std::vector<const FloatTensor*> fp;
  for (const FloatTensor& t : fin) fp.push_back(&t);
  IntTensor oi = EvalI1(kind, p, ip);
  EXPECT_EQ(oi.type.dims, out_dims) << "int";
  EXPECT_EQ(oi.data, expected) << "int";
  FloatTensor of = EvalF1(kind, p, fp);
  EXPECT_EQ(of.type.dims, out_dims) << "float";
  EXPECT_THAT(of.data, Near(ToFV(expected))) << "float";
}

// poolavg's 3x3 stride-1 SAME window.
inline OpParams Pool3x3Same(bool count_include_pad = true) {
  OpParams p = ::taso::testing::Window(3, 3, 1, Padding::kSame);
  p.count_include_pad = count_include_pad;
  return p;
}

// `got` holds exactly the tensors `want` points to: types and data, in order.
inline void ExpectSameTensors(const std::vector<IntTensor>& got, const std::vector<const IntTensor*>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].type, want[i]->type) << "tensor " << i;
    EXPECT_EQ(got[i].data, want[i]->data) << "tensor " << i;
  }
}

// 1..9 as a 3x3 image.
inline const IV kNine = {1, 2, 3, 4, 5, 6, 7, 8, 9};
// 3x3 SAME box sums of kNine (window clipped at the borders).
inline const IV kBoxSums = {12, 21, 16, 27, 45, 33, 24, 39, 28};

}  // namespace taso::testing_util

#endif  // TASO_TESTING_INTERPRETER_TEST_UTIL_H_
