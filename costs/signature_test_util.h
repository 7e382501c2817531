// A canonical signature for a test, the test failing if it has none.
#ifndef TASO_COSTS_SIGNATURE_TEST_UTIL_H_
#define TASO_COSTS_SIGNATURE_TEST_UTIL_H_

#include <utility>
#include <vector>

#include "costs/signature.h"
#include "gtest/gtest.h"

namespace taso::profiler {

inline CanonicalSignature MustCanonicalize(OpKind kind, OpParams params, std::vector<TensorType> inputs) {
  auto c = Canonicalize(Signature{kind, std::move(params), std::move(inputs)});
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : CanonicalSignature{};
}

}  // namespace taso::profiler

#endif  // TASO_COSTS_SIGNATURE_TEST_UTIL_H_
