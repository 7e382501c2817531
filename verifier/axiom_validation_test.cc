#include "verifier/axiom_validation.h"

#include <map>

#include "core/proof_signature.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier/axiom_redundancy.h"
#include "verifier/axiom_validation_report.h"

namespace taso::verifier {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(AxiomValidation, TheAxiomsHoldOnEverySmallInstance) {
  ValidationOptions options;  // max_dim 3, every stratum's first 20 instances; the bench runs them all
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_GE(results->size(), 50u);
  for (const AxiomValidation& r : *results) {
    EXPECT_GT(r.instances, 0) << r.name << " was never instantiated";
    EXPECT_EQ(r.failed, 0) << r.name << ": " << r.counterexample;
    EXPECT_EQ(r.unknown, 0) << r.name;
    EXPECT_THAT(r.empty_strata, IsEmpty()) << r.name << " is stated for parameters no instance has";
    // Every law can fire in a proof, and only where both its sides are typed.
    EXPECT_GT(r.triggered, 0) << r.name << " has no pattern any small instance matches";
    EXPECT_EQ(r.one_sided, 0) << r.name << ": " << r.counterexample;
  }
}

// The sum over a concatenated inner dimension, three ways. With halves of any
// shape (the law before 466d46e) and no patterns, its right side is typed where
// its left is not: x with 1 column against y with 2 rows. Stated for equal
// halves but still without patterns, its left side is typed where its right is
// not (x and z of different widths). Fired only from the right side, as
// matmul_concat_sum is, every instance has both sides typed.
constexpr char kSumAnyHalves[] =
    "(assert (forall ((x T) (y T) (z T) (w T) (even Int)) (= (ewadd (matmul 0 x y) (matmul 0 z w)) "
    "(matmul 0 (concat 1 even x z) (concat 0 even y w)))))";
constexpr char kSumEqualHalvesEitherSide[] =
    "(assert (forall ((x T) (y T) (z T) (w T)) (= (ewadd (matmul 0 x y) (matmul 0 z w)) "
    "(matmul 0 (concat 1 1 x z) (concat 0 1 y w)))))";
constexpr char kSumEqualHalvesFromTheRight[] =
    "(assert (forall ((x T) (y T) (z T) (w T)) (! (= (ewadd (matmul 0 x y) (matmul 0 z w)) "
    "(matmul 0 (concat 1 1 x z) (concat 0 1 y w))) :pattern ((matmul 0 (concat 1 1 x z) (concat 0 1 y w))))))";
// Without patterns Z3 starts from the smallest terms binding every variable:
// here x + y, well-typed for 4-D tensors whose 2-D transpose is not.
constexpr char kTransposeSumFromTheSum[] =
    "(assert (forall ((x T) (y T)) (= (transpose 20002 (ewadd x y)) "
    "(ewadd (transpose 20002 x) (transpose 20002 y)))))";

TEST(AxiomValidation, ALawMayFireOnlyFromTermsWhoseTypingImpliesBothSides) {
  ValidationOptions options;
  options.only = {"matmul_concat_sum", "transpose_ewadd"};
  options.extra_axioms_smt2 = {kSumAnyHalves, kSumEqualHalvesEitherSide, kSumEqualHalvesFromTheRight,
                               kTransposeSumFromTheSum};
  options.max_instances_per_stratum = 5;
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 6u);
  for (int i : {0, 1, 4}) {  // the built-in laws and the one fired from its right side
    const AxiomValidation& r = (*results)[i];
    EXPECT_GT(r.triggered, 0) << r.name;
    EXPECT_EQ(r.one_sided, 0) << r.name << ": " << r.counterexample;
    EXPECT_EQ(r.failed, 0) << r.name << ": " << r.counterexample;
  }
  const AxiomValidation& any_halves = (*results)[2];
  const AxiomValidation& either_side = (*results)[3];
  const AxiomValidation& transpose_sum = (*results)[5];
  for (const AxiomValidation* r : {&any_halves, &either_side, &transpose_sum}) {
    EXPECT_GT(r->one_sided, 0) << r->name;
    // Where both sides are typed these laws hold: the values never differ.
    EXPECT_EQ(r->failed, r->one_sided) << r->name << ": " << r->counterexample;
  }
  EXPECT_THAT(any_halves.counterexample, HasSubstr("the left side is not"));
  EXPECT_THAT(either_side.counterexample, HasSubstr("the right side is not"));
  EXPECT_THAT(transpose_sum.counterexample, HasSubstr("the pattern ewadd() is well-typed and the sides are not"));
  EXPECT_THAT(ValidationTable(*results, false), HasSubstr("one-sided"));
}

// The grouped channel-concat law as it stood before concat carried its
// equal-halves flag: false when y and w have different output counts, which
// takes output channels 1 and 3 (max_dim 2 has only 1 and 2, and 1+2 cannot
// be split into two groups).
constexpr char kOldGroupedConcatLaw[] =
    "(assert (forall ((x T) (y T) (z T) (w T) (sh Int) (sw Int) (pad Int) (act Int) (even0 Int) (even1 Int) "
    "(even2 Int)) (= (concat 1 even0 (conv2d sh sw pad act 1 x y) (conv2d sh sw pad act 1 z w)) "
    "(conv2d sh sw pad act 2 (concat 1 even1 x z) (concat 0 even2 y w)))))";

TEST(AxiomValidation, TheOldGroupedConcatLawFailsAtMaxDim3AndTheCurrentOneHolds) {
  ValidationOptions options;
  options.only = {"concat_conv_grouped"};
  options.extra_axioms_smt2 = {kOldGroupedConcatLaw};
  options.max_dim = 3;
  options.max_instances_per_stratum = 10;
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  const AxiomValidation& current = (*results)[0];
  const AxiomValidation& old = (*results)[1];
  EXPECT_GT(current.instances, 0);
  EXPECT_EQ(current.failed, 0) << current.counterexample;
  EXPECT_GT(old.failed, 0);
  EXPECT_THAT(old.counterexample, HasSubstr("the sides differ"));
  EXPECT_THAT(old.counterexample, HasSubstr("even0=0"));  // halves of different shapes
  // Strata for shapes no instance has: x and z have the input channels of y
  // and w, which cat_0 makes equal, so x and z always have equal shapes; then
  // y and w have equal shapes exactly when the two convolutions' outputs do.
  std::map<std::string, int64_t> stratum;
  for (const Stratum& s : old.empty_strata) {
    stratum = std::map<std::string, int64_t>(s.begin(), s.end());
    EXPECT_TRUE(stratum["even1"] == 0 || stratum["even0"] != stratum["even2"]) << StratumToString(s);
  }
  EXPECT_EQ(old.strata, 128);
  EXPECT_EQ(old.empty_strata.size(), 16u * 6);  // per sh, sw, pad, act: 4 with even1 = 0, 2 with even0 != even2

  options.max_dim = 2;
  options.only = {"ewadd_comm"};
  auto small = ValidateAxioms(options);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_GT((*small)[1].instances, 0);
  EXPECT_EQ((*small)[1].failed, 0) << "max_dim 2 was not expected to see it: " << (*small)[1].counterexample;
}

TEST(AxiomValidation, EveryStratumOfAConvolutionLawIsChecked) {
  ValidationOptions options;
  options.only = {"conv_smul", "relu_conv"};
  options.max_instances_per_stratum = 3;
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  for (const AxiomValidation& r : *results) {
    EXPECT_EQ(r.failed, 0) << r.name << ": " << r.counterexample;
    for (const auto& [param, value] : std::vector<std::pair<std::string, int64_t>>{
             {"sh", 2}, {"sw", 2}, {"pad", kPadValid}, {"groups", 2}, {"groups", 3}}) {
      EXPECT_GT(r.by_param.at(param).at(value), 0) << r.name << " " << param << "=" << value;
    }
    // sh x sw x pad x groups (x act for conv_smul), every one with instances.
    EXPECT_EQ(r.strata, r.name == "conv_smul" ? 48 : 24);
    EXPECT_THAT(r.empty_strata, IsEmpty());
    EXPECT_EQ(r.capped_strata, r.strata);
  }
  EXPECT_GT((*results)[0].by_param.at("act").at(kActRelu), 0);  // conv_smul: a relu convolution
}

TEST(AxiomValidation, IllTypedShapeAssignmentsAreCountedNotChecked) {
  ValidationOptions options;
  options.only = {"ewadd_comm"};
  options.max_dim = 3;
  options.max_instances_per_stratum = 0;  // all
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  const AxiomValidation& r = (*results)[0];
  // 91 shapes (rank 0, 9 of rank 2, 81 of rank 4); x + y needs y's shape
  // equal to x's (a broadcast is another symbol), so 91 instances and every
  // other pair ill-typed.
  EXPECT_EQ(r.instances, 91);
  EXPECT_EQ(r.ill_typed, 91 * 91 - 91);
  EXPECT_EQ(r.capped_strata, 0);

  const std::string table = ValidationTable(*results, /*by_param=*/true);
  EXPECT_THAT(table, HasSubstr("ill-typed"));
  EXPECT_THAT(table, HasSubstr(" 8190 "));
  const std::string json = ValidationJson(*results, options, 1.0);
  EXPECT_THAT(json, HasSubstr("\"ill_typed\": 8190"));
  EXPECT_THAT(json, HasSubstr("\"instances\": 91"));
}

TEST(AxiomValidation, ReportsListStrataWithoutInstancesAndCountsPerParameter) {
  ValidationOptions options;
  options.only = {"ewadd_comm"};
  // x joined to itself always has equal halves: the even=0 stratum is empty.
  options.extra_axioms_smt2 = {"(assert (forall ((x T) (a Int) (even Int)) (= (relu (concat a even x x)) "
                               "(concat a even (relu x) (relu x)))))"};
  options.max_instances_per_stratum = 0;
  auto results = ValidateAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  const AxiomValidation& r = (*results)[1];
  EXPECT_EQ(r.failed, 0) << r.counterexample;
  EXPECT_EQ(r.strata, 8);  // a in 0..3, even in {0,1}
  ASSERT_EQ(r.empty_strata.size(), 4u);
  EXPECT_EQ(StratumToString(r.empty_strata[0]), "a=0 even=0");
  EXPECT_EQ(r.by_param.at("even").count(0), 1u);
  EXPECT_EQ(r.by_param.at("even").at(0), 0);
  EXPECT_GT(r.by_param.at("a").at(3), 0);  // the last axis of a 4-D tensor
  const std::string table = ValidationTable(*results, /*by_param=*/true);
  EXPECT_THAT(table, HasSubstr("no instance: a=0 even=0"));
  EXPECT_THAT(table, HasSubstr("even=1: "));
  EXPECT_THAT(ValidationJson(*results, options, 1.0), HasSubstr("\"empty_strata\": [{\"a\": 0, \"even\": 0}"));
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
  options.only = {"transpose_identity", "ewadd_comm"};
  options.rlimit = 5'000'000;
  auto results = FindRedundantAxioms(options);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  for (const AxiomRedundancy& r : *results) {
    // T(I) = I follows from I being 0/1 on its diagonal (transpose_diagonal,
    // ewmul_imatmul_idempotent). transpose_concat_1 followed from
    // transpose_concat and the involution while Z3 could fire the first from
    // any concat; from whole sides only, it no longer does.
    if (r.name == "transpose_identity") {
      EXPECT_TRUE(r.entailed);
      EXPECT_THAT(r.by, ::testing::Contains("transpose_diagonal"));
    } else {
      EXPECT_FALSE(r.entailed) << r.name;
      EXPECT_FALSE(r.detail.empty());
    }
  }
}

}  // namespace
}  // namespace taso::verifier
