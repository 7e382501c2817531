// A gtest fixture holding a default-configured Prover, for the verifier's
// tests that prove rules.
#ifndef TASO_VERIFIER_PROVER_FIXTURE_H_
#define TASO_VERIFIER_PROVER_FIXTURE_H_

#include <memory>

#include "gtest/gtest.h"
#include "verifier/prover.h"

namespace taso::verifier {

class ProverFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = Prover::Create();
    ASSERT_TRUE(p.ok()) << p.status();
    prover_ = std::move(*p);
  }
  std::unique_ptr<Prover> prover_;
};

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_PROVER_FIXTURE_H_
