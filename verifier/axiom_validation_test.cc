#include "verifier/axiom_validation.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier/axiom_redundancy.h"

namespace taso::verifier {
namespace {

using ::testing::HasSubstr;

TEST(AxiomValidation, TheAxiomsHoldOnEverySmallInstance) {
  ValidationOptions options;
  options.max_instances = 300;  // enough to meet every shape class; the bench runs them all
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_GE(results->size(), 50u);
  for (const AxiomValidation& r : *results) {
    EXPECT_GT(r.instances, 0) << r.name << " was never instantiated";
    EXPECT_EQ(r.failed, 0) << r.name << ": " << r.counterexample;
    EXPECT_EQ(r.unknown, 0) << r.name;
  }
}

TEST(AxiomValidation, DeliberatelyWrongAxiomsAreCaught) {
  ValidationOptions options;
  options.only = {"ewadd_comm"};
  options.extra_axioms_smt2 = {
      // Convolution is linear in its weight, but not under a relu activation.
      "(assert (forall ((x T) (y T) (z T)) (= (conv2d 1 1 0 1 1 x (ewadd y z)) "
      "(ewadd (conv2d 1 1 0 1 1 x y) (conv2d 1 1 0 1 1 x z)))))",
      // The channel-concat law for any group count (TASO's known-wrong law).
      "(assert (forall ((x T) (y T) (z T) (groups Int) (even0 Int) (even1 Int)) (= (concat 1 even0 (conv2d 1 1 0 0 "
      "groups x y) (conv2d 1 1 0 0 groups x z)) (conv2d 1 1 0 0 groups x (concat 0 even1 y z)))))",
      // Concat associativity: equal values, different split trees.
      "(assert (forall ((x T) (y T) (z T) (even0 Int) (even1 Int) (even2 Int) (even3 Int)) (= (concat 0 even0 "
      "(concat 0 even1 x y) z) (concat 0 even2 x (concat 0 even3 y z)))))",
  };
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 4u);
  EXPECT_EQ((*results)[0].failed, 0);
  for (int i = 1; i < 4; ++i) EXPECT_GT((*results)[i].failed, 0) << (*results)[i].name;
  EXPECT_THAT((*results)[1].counterexample, HasSubstr("the sides differ"));
  EXPECT_THAT((*results)[2].counterexample, HasSubstr("groups=2"));
  EXPECT_THAT((*results)[3].counterexample, HasSubstr("split0"));
}

TEST(AxiomValidation, BadRequestsAreErrors) {
  ValidationOptions options;
  options.only = {"no_such_axiom"};
  EXPECT_EQ(ValidateAxioms(options).status().code(), absl::StatusCode::kInvalidArgument);
  ValidationOptions garbage;
  garbage.only = {"ewadd_comm"};
  garbage.extra_axioms_smt2 = {"(assert (forall ((x T)) (= (no_such_op x) x)))"};
  auto results = ValidateAxioms(garbage);
  ASSERT_TRUE(results.ok());
  EXPECT_GT((*results)[1].failed, 0);
  EXPECT_THAT((*results)[1].counterexample, HasSubstr("z3"));
}

TEST(AxiomRedundancy, ALawDerivableFromOthersIsReported) {
  RedundancyOptions options;
  options.only = {"transpose_concat_1", "ewadd_comm"};
  options.rlimit = 5'000'000;
  auto results = FindRedundantAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  for (const AxiomRedundancy& r : *results) {
    if (r.name == "transpose_concat_1") {
      EXPECT_TRUE(r.entailed);
      EXPECT_THAT(r.by, ::testing::Contains("transpose_involution"));
    } else {
      EXPECT_FALSE(r.entailed) << r.name;
      EXPECT_FALSE(r.detail.empty());
    }
  }
}

}  // namespace
}  // namespace taso::verifier
