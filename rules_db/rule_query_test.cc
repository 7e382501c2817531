// Rule queries in the store: each ListRules filter, the operator-kind index
// (used, correct after updates, built for a database written without it and
// resumable), and MatchRules' choice of candidates.
#include <set>

#include "core/rule_sexpr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rules_db/op_index.h"
#include "rules_db/rule_store.h"
#include "rules_db/test_util.h"
#include "storage/database.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"

namespace taso::rules_db {
namespace {

using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

// Hand-written rules, proved by the store's own checker on PutRules.
constexpr char kAddComm[] = "(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)";
constexpr char kMulComm[] = "(ewmul ?x@2_4 ?y@2_4)=>(ewmul ?y@2_4 ?x@2_4)";
constexpr char kMatMulRelu[] = "(relu (matmul 0 ?x@2_4 ?w@4_4))=>(matmul 2 ?x@2_4 ?w@4_4)";
constexpr char kDistribute[] =
    "(matmul 0 ?x@2_4 (ewadd ?w1@4_4 ?w2@4_4))=>(ewadd (matmul 0 ?x@2_4 ?w1@4_4) (matmul 0 ?x@2_4 ?w2@4_4))";
constexpr char kConvRelu[] = "(relu (conv2d 1 1 0 0 ?x@1_4_8_8 ?w@4_4_3_3))=>(conv2d 1 1 0 2 ?x@1_4_8_8 ?w@4_4_3_3)";

rules::Rule Parse(const std::string& sexpr) {
  auto parsed = RulesFromSexpr(sexpr);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() && !parsed->empty() ? (*parsed)[0] : rules::Rule();
}

class RuleQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenStore(TempDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    ASSERT_NE(store_, nullptr);
    auto prover = verifier::Prover::Create();
    ASSERT_TRUE(prover.ok());
    prover_ = std::move(*prover);
    rules_ = Open();
    ASSERT_TRUE(rules_->BuildOpIndex().ok());  // as taso_rules_db does on start
    for (const char* sexpr : {kAddComm, kMulComm, kMatMulRelu, kDistribute, kConvRelu}) {
      id_[sexpr] = Put(sexpr, rules::RULE_STATUS_PROVED);
    }
  }

  std::unique_ptr<RuleStore> Open(int chunk = 10000, absl::Duration match_time_limit = absl::Seconds(60)) {
    RuleStoreOptions options;
    options.match_time_limit = match_time_limit;
    options.checker = [this](rules::Rule& rule) {
      return verifier::VerifyStandalone(*prover_, verifier::SolverName(), rule);
    };
    options.op_index_chunk = chunk;
    options.matcher = [this](const ir::Graph&, const std::vector<rules::Rule>& rules, int) {
      for (const rules::Rule& r : rules) matched_.insert(r.id());
      MatchRulesResponse response;
      response.set_rules_matched(static_cast<int64_t>(rules.size()));
      return absl::StatusOr<MatchRulesResponse>(response);
    };
    return std::make_unique<RuleStore>(store_.get(), options);
  }

  std::string Put(const std::string& sexpr, rules::RuleStatus status) {
    PutRulesRequest put;
    *put.add_rules() = Parse(sexpr);
    put.mutable_rules(0)->set_status(status);
    auto response = rules_->PutRules(put);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->ids(0) : "";
  }

  // Every page of a listing (several pages of 2, or one of 100 where the
  // rules read are counted: a full page reads one rule past its end). The
  // rules read add up; whether the index answered is the last page's.
  std::vector<std::string> List(ListRulesRequest request, RuleStore* store = nullptr, int page_size = 2) {
    std::vector<std::string> ids;
    request.set_page_size(page_size);
    while (true) {
      auto page = (store ? store : rules_.get())->ListRules(request);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      read_ += page->rules_read();
      used_index_ = page->used_op_index();
      for (const auto& r : page->rules()) ids.push_back(r.id());
      if (page->next_page_token().empty()) break;
      request.set_page_token(page->next_page_token());
    }
    return ids;
  }

  std::vector<std::string> Ids(std::initializer_list<const char*> sexprs) {
    std::vector<std::string> out;
    for (const char* s : sexprs) out.push_back(id_[s]);
    return out;
  }

  // Removes every operator index entry, as in a database written before the
  // index existed.
  void DropIndex() {
    auto family = store_->database()->Family(OpIndex::kFamily);
    ASSERT_TRUE(family.ok());
    rocksdb::DB* db = store_->database()->db();
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), *family));
    for (it->SeekToFirst(); it->Valid(); it->Next()) ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), *family, it->key()).ok());
  }

  std::unique_ptr<GraphHashStore> store_;
  std::unique_ptr<verifier::Prover> prover_;
  std::unique_ptr<RuleStore> rules_;
  std::map<std::string, std::string> id_;
  std::set<std::string> matched_;
  int64_t read_ = 0;
  bool used_index_ = false;
};

TEST_F(RuleQueryTest, AnyOpReadsOnlyTheRulesUsingTheOperators) {
  ListRulesRequest request;
  request.add_any_op_kinds(ir::OP_MATMUL);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kMatMulRelu, kDistribute})));
  EXPECT_TRUE(used_index_);
  EXPECT_EQ(read_, 2);  // of 5 stored
  read_ = 0;
  request.add_any_op_kinds(ir::OP_CONV2D);
  EXPECT_THAT(List(request, nullptr, 100), UnorderedElementsAreArray(Ids({kMatMulRelu, kDistribute, kConvRelu})));
  EXPECT_EQ(read_, 3);
}

TEST_F(RuleQueryTest, OpAllWantsEveryOperator) {
  ListRulesRequest request;
  request.add_all_op_kinds(ir::OP_MATMUL);
  request.add_all_op_kinds(ir::OP_EW_ADD);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kDistribute})));
  EXPECT_TRUE(used_index_);
  EXPECT_EQ(read_, 1);  // the index's kinds rule out the ewadd-only rule unread
  request.add_all_op_kinds(ir::OP_RELU);
  EXPECT_THAT(List(request), ::testing::IsEmpty());
}

TEST_F(RuleQueryTest, OnlyOpsRefusesRulesWithAnyOtherOperator) {
  ListRulesRequest request;
  request.add_allowed_op_kinds(ir::OP_EW_ADD);
  request.add_allowed_op_kinds(ir::OP_EW_MUL);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kAddComm, kMulComm})));
  EXPECT_EQ(read_, 2);
  request.add_allowed_op_kinds(ir::OP_MATMUL);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kAddComm, kMulComm, kDistribute})));
}

TEST_F(RuleQueryTest, PatternOnEitherOrOneSide) {
  ListRulesRequest request;
  request.set_pattern("(relu ?x)");
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kMatMulRelu, kConvRelu})));
  EXPECT_FALSE(used_index_);  // no operator filter: a scan
  request.set_pattern("(matmul 2 ?x ?w)");
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kMatMulRelu})));
  request.set_pattern_side(PATTERN_SIDE_SOURCE);
  EXPECT_THAT(List(request), ::testing::IsEmpty());
  request.set_pattern_side(PATTERN_SIDE_TARGET);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kMatMulRelu})));
  request.set_pattern("(relu ?x");
  auto bad = rules_->ListRules(request);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("pattern"));
}

TEST_F(RuleQueryTest, AxiomSelectsRulesWhoseProofUsedIt) {
  auto add = rules_->GetRule(id_[kAddComm]);
  auto mul = rules_->GetRule(id_[kMulComm]);
  ASSERT_TRUE(add.ok() && mul.ok());
  ASSERT_EQ(add->proof().axioms_used_size(), 1) << add->DebugString();
  const std::string axiom = add->proof().axioms_used(0);
  ASSERT_THAT(mul->proof().axioms_used(), ::testing::Not(::testing::Contains(axiom)));
  ListRulesRequest request;
  request.add_axioms(axiom);
  const std::vector<std::string> ids = List(request);
  EXPECT_THAT(ids, ::testing::Contains(id_[kAddComm]));
  EXPECT_THAT(ids, ::testing::Not(::testing::Contains(id_[kMulComm])));
  for (const std::string& id : ids) {
    auto rule = rules_->GetRule(id);
    ASSERT_TRUE(rule.ok());
    EXPECT_THAT(rule->proof().axioms_used(), ::testing::Contains(axiom));
  }
  request.set_axioms(0, "no_such_axiom");
  EXPECT_THAT(List(request), ::testing::IsEmpty());
}

TEST_F(RuleQueryTest, FiltersCombineWithStatuses) {
  const std::string unknown = Put("(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))",
                                  rules::RULE_STATUS_UNKNOWN);
  ListRulesRequest request;
  request.add_any_op_kinds(ir::OP_RELU);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kMatMulRelu, kConvRelu})));  // proved only
  request.add_statuses(rules::RULE_STATUS_UNKNOWN);
  EXPECT_THAT(List(request), UnorderedElementsAre(unknown));
}

TEST_F(RuleQueryTest, TheIndexStaysCorrectAfterUpdates) {
  // Writing a rule again (a new revision) leaves one entry per operator.
  auto stored = rules_->GetRule(id_[kDistribute]);
  ASSERT_TRUE(stored.ok());
  PutRulesRequest again;
  *again.add_rules() = *stored;
  again.mutable_rules(0)->set_status(rules::RULE_STATUS_TIMEOUT);
  ASSERT_TRUE(rules_->PutRules(again).ok());
  ListRulesRequest request;
  request.add_any_op_kinds(ir::OP_MATMUL);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kMatMulRelu})));  // no longer proved
  request.add_statuses(rules::RULE_STATUS_TIMEOUT);
  EXPECT_THAT(List(request), UnorderedElementsAreArray(Ids({kDistribute})));
  // A rule added later is found through the index.
  const std::string added = Put("(matmul 0 ?x@2_4 ?w@4_4)=>(matmul 0 ?x@2_4 ?w@4_4)", rules::RULE_STATUS_TIMEOUT);
  read_ = 0;
  EXPECT_THAT(List(request, nullptr, 100), UnorderedElementsAre(id_[kDistribute], added));
  EXPECT_TRUE(used_index_);
  EXPECT_EQ(read_, 3);  // the matmul rules only
}

TEST_F(RuleQueryTest, AnOldDatabaseIsIndexedOnceResumably) {
  DropIndex();
  // Restarted on a database without the index: queries scan, with the same answers.
  auto restarted = Open(/*chunk=*/2);
  ListRulesRequest request;
  request.add_any_op_kinds(ir::OP_RELU);
  EXPECT_THAT(List(request, restarted.get(), 100), UnorderedElementsAreArray(Ids({kMatMulRelu, kConvRelu})));
  EXPECT_FALSE(used_index_);
  EXPECT_EQ(read_, 5);
  // Stopped after its first chunk: still scanning.
  std::atomic<bool> stop{true};
  ASSERT_TRUE(restarted->BuildOpIndex(&stop).ok());
  List(request, restarted.get());
  EXPECT_FALSE(used_index_);
  // Another start resumes and finishes; the index then answers.
  auto again = Open(/*chunk=*/2);
  ASSERT_TRUE(again->BuildOpIndex().ok());
  read_ = 0;
  EXPECT_THAT(List(request, again.get(), 100), UnorderedElementsAreArray(Ids({kMatMulRelu, kConvRelu})));
  EXPECT_TRUE(used_index_);
  EXPECT_EQ(read_, 2);
}

TEST_F(RuleQueryTest, MatchRulesReadsOnlyRulesWithASideOfTheGraphsOperators) {
  // A graph of matmul and relu: kMatMulRelu fits by either side; kDistribute
  // has ewadd on both sides; the others use none of these operators.
  MatchRulesRequest request;
  for (ir::OpKind kind : {ir::OP_INPUT, ir::OP_WEIGHT, ir::OP_MATMUL, ir::OP_RELU}) {
    request.mutable_graph()->add_nodes()->set_kind(kind);
  }
  auto response = rules_->MatchRules(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(matched_, UnorderedElementsAre(id_[kMatMulRelu]));
  EXPECT_TRUE(response->used_op_index());
  EXPECT_EQ(response->rules_read(), 1);  // the index's kinds rule out the rest unread
  EXPECT_EQ(response->rules_matched(), 1);
  RuleStore without(store_.get());
  EXPECT_EQ(without.MatchRules(request).status().code(), absl::StatusCode::kUnimplemented);
}

TEST_F(RuleQueryTest, MatchRulesOverItsLimitsIsRefused) {
  MatchRulesRequest request;
  for (ir::OpKind kind : {ir::OP_INPUT, ir::OP_WEIGHT, ir::OP_MATMUL, ir::OP_RELU}) {
    request.mutable_graph()->add_nodes()->set_kind(kind);
  }
  MatchRulesRequest many_sites = request;
  many_sites.set_max_sites(RuleStoreOptions().max_match_sites + 1);
  auto sites = rules_->MatchRules(many_sites);
  EXPECT_EQ(sites.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sites.status().message(), ::testing::HasSubstr("--max_match_sites"));
  MatchRulesRequest big = request;
  for (int i = 0; i < RuleStoreOptions().max_match_graph_nodes; ++i) big.mutable_graph()->add_nodes()->set_kind(ir::OP_RELU);
  EXPECT_EQ(rules_->MatchRules(big).status().code(), absl::StatusCode::kInvalidArgument);
  // No time at all: the first candidate rule is past the limit.
  auto hurried = Open(10000, absl::ZeroDuration());
  auto late = hurried->MatchRules(request);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(late.status().message(), ::testing::HasSubstr("--match_time_limit_s"));
  EXPECT_TRUE(matched_.empty());
}

}  // namespace
}  // namespace taso::rules_db
