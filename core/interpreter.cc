#include "core/interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/evaluator.h"
#include "core/op_registry.h"

namespace taso {
namespace {

// Integer domain: int32 arithmetic that wraps (done in uint32 to avoid UB).
struct IntDomain {
  using T = int32_t;
  static constexpr bool kZeroProductsAreExact = true;  // x + 0 * y == x, wrapping
  bool relu_as_polynomial = false;

  static T Add(T a, T b) { return static_cast<T>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
  static T Mul(T a, T b) { return static_cast<T>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b)); }
  static T Zero() { return 0; }
  static T One() { return 1; }
  static T Max(T a, T b) { return std::max(a, b); }
  static T Lowest() { return std::numeric_limits<T>::min(); }
  static const char* Name() { return "int32"; }

  absl::Status Supports(Activation a) const {
    if (a == Activation::kTanh || a == Activation::kSigmoid) {
      return absl::UnimplementedError(absl::StrCat(ActivationName(a),
                                                   " has no integer semantics; use the float interpreter"));
    }
    return absl::OkStatus();
  }
  T Activate(Activation a, T x) const {
    if (a != Activation::kRelu) return x;
    return relu_as_polynomial ? Add(Mul(x, Add(x, 1)), 1) : std::max<T>(x, 0);
  }
  // Average pooling in the integer domain is the window sum (no division).
  static T AvgFinish(T sum, int64_t, int64_t) { return sum; }
  static T PoolConstant(int64_t, int64_t) { return 1; }
};

struct FloatDomain {
  using T = float;

  static T Add(T a, T b) { return a + b; }
  static T Mul(T a, T b) { return a * b; }
  static T Zero() { return 0.f; }
  static T One() { return 1.f; }
  static T Max(T a, T b) { return std::max(a, b); }
  static T Lowest() { return -std::numeric_limits<T>::infinity(); }
  static const char* Name() { return "float32"; }

  absl::Status Supports(Activation) const { return absl::OkStatus(); }
  T Activate(Activation a, T x) const {
    switch (a) {
      case Activation::kNone: return x;
      case Activation::kRelu: return std::max(x, 0.f);
      case Activation::kSigmoid: return 1.f / (1.f + std::exp(-x));
      case Activation::kTanh: return std::tanh(x);
    }
    return x;
  }
  static T AvgFinish(T sum, int64_t divisor, int64_t) { return sum / static_cast<T>(divisor); }
  static T PoolConstant(int64_t kh, int64_t kw) { return 1.f / static_cast<T>(kh * kw); }
};

}  // namespace

absl::StatusOr<std::vector<IntTensor>> EvalOpInt(OpKind kind, const OpParams& params,
                                                 const std::vector<const IntTensor*>& inputs,
                                                 const IntOptions& options) {
  IntDomain d;
  d.relu_as_polynomial = options.relu_as_polynomial;
  return internal::Evaluator<IntDomain>(d).Eval(kind, params, inputs);
}

absl::StatusOr<std::vector<FloatTensor>> EvalOpFloat(OpKind kind, const OpParams& params,
                                                     const std::vector<const FloatTensor*>& inputs) {
  return internal::Evaluator<FloatDomain>(FloatDomain{}).Eval(kind, params, inputs);
}

absl::StatusOr<std::vector<IntTensor>> EvaluateInt(const Graph& graph,
                                                   const std::map<std::string, IntTensor>& feeds,
                                                   const IntOptions& options) {
  IntDomain d;
  d.relu_as_polynomial = options.relu_as_polynomial;
  return internal::EvaluateGraph(graph, feeds, d);
}

absl::StatusOr<std::vector<FloatTensor>> EvaluateFloat(const Graph& graph,
                                                       const std::map<std::string, FloatTensor>& feeds) {
  return internal::EvaluateGraph(graph, feeds, FloatDomain{});
}

double FloatBound(double a, double b, double tolerance, double scale) {
  return tolerance * std::max({1.0, std::fabs(a), std::fabs(b), scale});
}

bool FloatsAgree(double a, double b, double tolerance, double scale) {
  return std::fabs(a - b) <= FloatBound(a, b, tolerance, scale);
}

std::map<std::string, FloatTensor> AbsoluteFeeds(std::map<std::string, FloatTensor> feeds) {
  for (auto& [name, tensor] : feeds) {
    for (float& v : tensor.data) v = std::fabs(v);
  }
  return feeds;
}

}  // namespace taso
