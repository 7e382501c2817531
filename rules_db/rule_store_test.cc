#include "rules_db/rule_store.h"

#include <map>
#include <thread>

#include "core/rule_sexpr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "records/encoding.h"
#include "rules_db/test_util.h"
#include "rules_db/verify_test_util.h"
#include "verifier/candidate.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/pruning.h"

namespace taso::rules_db {
namespace {

using ::testing::HasSubstr;

constexpr int kSize = 3;

ReportVerdictsRequest Verify(const Lease& lease, const std::string& worker, verifier::Prover& prover) {
  return ::taso::rules_db::Verify(lease, worker, prover, kSize);
}

std::map<rules::RuleStatus, int64_t> CountByListing(RuleStore& rules) {
  std::map<rules::RuleStatus, int64_t> counts;
  ListRulesRequest request;
  for (int s = rules::RULE_STATUS_CANDIDATE; s <= rules::RULE_STATUS_PRUNED; ++s) {
    request.add_statuses(static_cast<rules::RuleStatus>(s));
  }
  request.set_page_size(7);  // several pages
  while (true) {
    auto page = rules.ListRules(request);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    for (const auto& r : page->rules()) ++counts[r.status()];
    if (page->next_page_token().empty()) break;
    request.set_page_token(page->next_page_token());
  }
  return counts;
}

// One rule in the import syntax, as a client would build it.
rules::Rule ParseRule(const std::string& sexpr) {
  auto parsed = RulesFromSexpr(sexpr);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed.ok() ? parsed->size() : 0u, 1u);
  return parsed.ok() && !parsed->empty() ? (*parsed)[0] : rules::Rule();
}

// What a client that skips the proof sends: the claim and a made-up proof.
rules::Rule Planted(const std::string& sexpr) {
  rules::Rule rule = ParseRule(sexpr);
  rule.set_status(rules::RULE_STATUS_PROVED);
  rule.set_status_detail("trust me");
  rule.mutable_proof()->add_axioms_used("forged");
  rule.mutable_proof()->set_solver("forged");
  rule.mutable_provenance()->set_verifier_worker_id("forger");
  return rule;
}

constexpr char kTrueRule[] = "(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)";
constexpr char kFalseRule[] = "(relu (ewadd ?x@2_4 ?y@2_4))=>(ewadd (relu ?x@2_4) (relu ?y@2_4))";

// The pruner taso_rules_db wires in (bin/taso_rules_db.cc).
PruneCounts PruneWithVerifier(std::vector<rules::Rule>& rules) { return verifier::PruneRules(rules); }

class RuleStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenStore(TempDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    ASSERT_NE(store_, nullptr);
    job_ = RunJob(*store_, SmallSpec(kSize), "j");
    ASSERT_EQ(job_.state(), JOB_STATE_GENERATED);
    ASSERT_GT(job_.candidate_classes(), 3);
    auto prover = verifier::Prover::Create();
    ASSERT_TRUE(prover.ok());
    prover_ = std::move(*prover);
    auto checker_prover = verifier::Prover::Create();
    ASSERT_TRUE(checker_prover.ok());
    checker_prover_ = std::move(*checker_prover);
    RuleStoreOptions options = Checked();
    options.pruner = PruneWithVerifier;
    rules_ = std::make_unique<RuleStore>(store_.get(), options);
  }
  // Options with the checker taso_rules_db wires in (bin/taso_rules_db.cc).
  RuleStoreOptions Checked() {
    RuleStoreOptions options;
    options.checker = [this](rules::Rule& rule) {
      return verifier::VerifyClaim(*checker_prover_, verifier::SolverName(), rule);
    };
    return options;
  }
  // Every rule of job "j", as ForEachJobRule visits them.
  void ReadJobRules(RuleStore& store, std::vector<rules::Rule>& out) {
    ASSERT_TRUE(store.ForEachJobRule("j", [&](const rules::Rule& r) {
      out.push_back(r);
      return absl::OkStatus();
    }).ok());
  }
  // A false rule stored UNKNOWN in job "j" (never proved), with its id.
  void StoreUnprovedRule(RuleStore& rules, rules::Rule& unknown) {
    unknown = ParseRule(kFalseRule);
    unknown.set_status(rules::RULE_STATUS_UNKNOWN);
    unknown.mutable_provenance()->set_job_id("j");
    PutRulesRequest put;
    *put.add_rules() = unknown;
    auto stored = rules.PutRules(put);
    ASSERT_TRUE(stored.ok()) << stored.status();
    unknown.set_id(stored->ids(0));
  }
  // Leases, proves and reports every class of the job through `rules`.
  void VerifyEveryClass(RuleStore& rules) {
    while (true) {
      auto leases = rules.LeaseCandidates(LeaseRequest("w"));
      ASSERT_TRUE(leases.ok()) << leases.status();
      if (leases->leases().empty()) break;
      ASSERT_TRUE(rules.ReportVerdicts(Verify(leases->leases(0), "w", *prover_)).ok());
    }
    rules.WaitForFinishes();  // the store finishes the job on a thread of its own
  }
  std::unique_ptr<GraphHashStore> store_;
  Job job_;
  std::unique_ptr<verifier::Prover> prover_;
  std::unique_ptr<verifier::Prover> checker_prover_;
  std::unique_ptr<RuleStore> rules_;
};

TEST_F(RuleStoreTest, EveryClassIsVerifiedOnceAndTheJobEndsPruned) {
  int64_t leased = 0;
  while (true) {
    auto leases = rules_->LeaseCandidates(LeaseRequest("w1"));
    ASSERT_TRUE(leases.ok()) << leases.status();
    if (leases->leases().empty()) break;
    ++leased;
    auto reply = rules_->ReportVerdicts(Verify(leases->leases(0), "w1", *prover_));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_TRUE(reply->accepted());
  }
  EXPECT_EQ(leased, job_.candidate_classes());
  rules_->WaitForFinishes();
  auto job = store_->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), JOB_STATE_DONE);
  const Verification& v = job->verification();
  EXPECT_EQ(v.classes_verified(), job_.candidate_classes());
  EXPECT_GT(v.rules_proved(), 0);
  EXPECT_LE(v.after_common_subgraph(), v.after_renaming());
  EXPECT_LE(v.after_renaming(), v.rules_proved());

  // The table, the listing and Stats agree with what is stored.
  auto counts = CountByListing(*rules_);
  EXPECT_EQ(counts[rules::RULE_STATUS_PROVED], v.after_common_subgraph());
  EXPECT_EQ(counts[rules::RULE_STATUS_PROVED] + counts[rules::RULE_STATUS_PRUNED], v.rules_proved());
  EXPECT_EQ(counts[rules::RULE_STATUS_REJECTED_PRECHECK], v.rules_rejected_precheck());
  EXPECT_EQ(counts[rules::RULE_STATUS_REJECTED_PRECHECK], job_.rejected_pairs());
  int64_t pairs = 0;
  for (const auto& [status, n] : counts) pairs += n;
  EXPECT_EQ(pairs, job_.candidate_pairs() + job_.rejected_pairs());
  StatsRequest stats_request;
  stats_request.set_job_id("j");
  auto stats = rules_->Stats(stats_request);
  ASSERT_TRUE(stats.ok());
  for (const auto& c : stats->rules_by_status()) EXPECT_EQ(c.count(), counts[c.status()]) << c.status();
  EXPECT_EQ(stats->classes_pending(), 0);
  EXPECT_EQ(stats->classes_leased(), 0);

  // Every pruned rule names a reason; the default listing is the proved set.
  ListRulesRequest pruned;
  pruned.add_statuses(rules::RULE_STATUS_PRUNED);
  pruned.set_page_size(1000);
  auto listing = rules_->ListRules(pruned);
  ASSERT_TRUE(listing.ok());
  for (const auto& r : listing->rules()) EXPECT_FALSE(r.status_detail().empty()) << r.id();
  auto served = rules_->ListRules(ListRulesRequest());
  ASSERT_TRUE(served.ok());
  for (const auto& r : served->rules()) {
    EXPECT_EQ(r.status(), rules::RULE_STATUS_PROVED);
    EXPECT_FALSE(r.proof().axioms_used().empty()) << r.id();
    EXPECT_EQ(r.provenance().job_id(), "j");
  }
}

TEST_F(RuleStoreTest, AboveThePruningLimitRulesAreCountedNotPruned) {
  RuleStoreOptions options = Checked();
  options.prune_max_rules = 5;
  options.pruner = PruneWithVerifier;
  RuleStore limited(store_.get(), options);
  VerifyEveryClass(limited);
  auto job = store_->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), JOB_STATE_DONE);
  const Verification& v = job->verification();
  EXPECT_THAT(v.note(), HasSubstr("not pruned"));
  auto counts = CountByListing(limited);
  EXPECT_EQ(counts[rules::RULE_STATUS_PRUNED], 0);
  EXPECT_EQ(counts[rules::RULE_STATUS_PROVED], v.rules_proved());
  EXPECT_GT(v.rules_proved(), options.prune_max_rules);
  EXPECT_EQ(counts[rules::RULE_STATUS_REJECTED_PRECHECK], v.rules_rejected_precheck());
  EXPECT_EQ(counts[rules::RULE_STATUS_UNKNOWN], v.rules_unknown());
}

// A job left unpruned (above the limit) is pruned from outside, as `taso
// rules prune` does: its rules read back, verdicts and a checkpoint written
// in one go, the table recorded; only proved/pruned ever change.
TEST_F(RuleStoreTest, AnUnprunedJobIsPrunedFromOutsideWithOnlyProvedAndPrunedExchanged) {
  RuleStoreOptions options = Checked();
  options.prune_max_rules = 5;
  RuleStore limited(store_.get(), options);
  VerifyEveryClass(limited);
  std::vector<rules::Rule> rules;
  ASSERT_NO_FATAL_FAILURE(ReadJobRules(limited, rules));
  int64_t none = 0;
  ASSERT_TRUE(limited.ForEachJobRule("other", [&](const rules::Rule&) {
    ++none;
    return absl::OkStatus();
  }).ok());
  EXPECT_EQ(none, 0);
  std::vector<rules::Rule> fetched;
  ASSERT_TRUE(limited.GetRules({rules[2].id(), rules[0].id()}, fetched).ok());
  ASSERT_EQ(fetched.size(), 2u);
  EXPECT_EQ(fetched[0].id(), rules[2].id());
  EXPECT_EQ(fetched[1].id(), rules[0].id());
  std::vector<rules::Rule> missing;
  EXPECT_EQ(limited.GetRules({"rnothere"}, missing).code(), absl::StatusCode::kNotFound);

  std::vector<rules::Rule> pruned = rules;
  const verifier::ReductionTable table = verifier::PruneRules(pruned);
  std::vector<rules::Rule> changed;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (pruned[i].status() != rules[i].status()) changed.push_back(pruned[i]);
  }
  ASSERT_FALSE(changed.empty());
  EXPECT_EQ(limited.PruneCheckpoint("j").value(), "");
  ASSERT_TRUE(limited.StorePruning("j", changed, "checkpoint 1").ok());
  EXPECT_EQ(limited.PruneCheckpoint("j").value(), "checkpoint 1");
  auto counts = CountByListing(limited);
  EXPECT_EQ(counts[rules::RULE_STATUS_PROVED], table.after_common_subgraph);
  auto one = limited.GetRule(changed[0].id());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->status_detail(), changed[0].status_detail());
  EXPECT_FALSE(one->proof().axioms_used().empty());  // the rest is the stored rule

  // Nothing but proved <-> pruned, and only within the job.
  rules::Rule unknown, refuted = changed[0];
  ASSERT_NO_FATAL_FAILURE(StoreUnprovedRule(limited, unknown));
  unknown.set_status(rules::RULE_STATUS_PRUNED);
  refuted.set_status(rules::RULE_STATUS_REFUTED);
  for (const rules::Rule& bad : {unknown, refuted}) {
    absl::Status s = limited.StorePruning("j", {bad}, "checkpoint 2");
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << bad.id();
    EXPECT_THAT(s.message(), HasSubstr("only moves its rules between proved and pruned"));
  }
  EXPECT_EQ(limited.StorePruning("other", {changed[0]}, "x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(limited.PruneCheckpoint("j").value(), "checkpoint 1");

  ASSERT_TRUE(limited.RecordPruning("j", table, 1).ok());
  auto job = store_->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->verification().after_common_subgraph(), table.after_common_subgraph);
  EXPECT_EQ(job->verification().pruned_store_shards(), 1);
  EXPECT_EQ(job->verification().note(), "");
  EXPECT_EQ(job->state(), JOB_STATE_DONE);
}

// The same, as the RPCs a remote pruner (`taso rules prune --store`) calls:
// bounded requests, a DONE job only, verdicts by id that move nothing but
// proved <-> pruned, and the table recorded only for this store's shard count.
TEST_F(RuleStoreTest, ThePruningRequestsAreBoundedAndOnlyForADoneJob) {
  RuleStoreOptions options = Checked();
  options.prune_max_rules = 5;
  RuleStore limited(store_.get(), options);
  StorePruningRequest early;
  early.set_job_id("j");
  EXPECT_EQ(limited.StorePruning(early).status().code(), absl::StatusCode::kFailedPrecondition);
  VerifyEveryClass(limited);
  std::vector<rules::Rule> rules;
  ASSERT_NO_FATAL_FAILURE(ReadJobRules(limited, rules));
  const rules::Rule* proved = nullptr;
  for (const rules::Rule& r : rules) {
    if (r.status() == rules::RULE_STATUS_PROVED && proved == nullptr) proved = &r;
  }
  ASSERT_NE(proved, nullptr);
  rules::Rule unknown;
  ASSERT_NO_FATAL_FAILURE(StoreUnprovedRule(limited, unknown));
  const rules::Rule* other = &unknown;

  GetRulesRequest get;
  get.add_ids(rules[1].id());
  get.add_ids(rules[0].id());
  auto got = limited.GetRules(get);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->rules_size(), 2);
  EXPECT_EQ(got->rules(0).id(), rules[1].id());
  for (int i = 0; i < 1000; ++i) get.add_ids(rules[0].id());
  EXPECT_EQ(limited.GetRules(get).status().code(), absl::StatusCode::kInvalidArgument);

  StorePruningRequest too_many;
  too_many.set_job_id("j");
  for (int i = 0; i <= 100'000; ++i) too_many.add_verdicts()->set_rule_id(proved->id());
  EXPECT_EQ(limited.StorePruning(too_many).status().code(), absl::StatusCode::kInvalidArgument);

  StorePruningRequest widen;  // a rule that was never proved cannot be made PROVED
  widen.set_job_id("j");
  widen.set_checkpoint("c0");
  PruneVerdict& forged = *widen.add_verdicts();
  forged.set_rule_id(other->id());
  forged.set_status(rules::RULE_STATUS_PROVED);
  EXPECT_EQ(limited.StorePruning(widen).status().code(), absl::StatusCode::kFailedPrecondition);

  StorePruningRequest prune;
  prune.set_job_id("j");
  prune.set_checkpoint("c1");
  PruneVerdict& v = *prune.add_verdicts();
  v.set_rule_id(proved->id());
  v.set_status(rules::RULE_STATUS_PRUNED);
  v.set_status_detail("implied by a test");
  auto written = limited.StorePruning(prune);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->rules_written(), 1);
  GetPruneCheckpointRequest checkpoint;
  checkpoint.set_job_id("j");
  EXPECT_EQ(limited.GetPruneCheckpoint(checkpoint)->checkpoint(), "c1");
  auto now = limited.GetRule(proved->id());
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->status(), rules::RULE_STATUS_PRUNED);
  EXPECT_EQ(now->status_detail(), "implied by a test");
  EXPECT_EQ(now->target().SerializeAsString(), proved->target().SerializeAsString());  // content untouched

  RecordPruningRequest record;
  record.set_job_id("j");
  record.mutable_reduction()->set_after_common_subgraph(7);
  record.set_store_shards(2);
  EXPECT_EQ(limited.RecordPruning(record).status().code(), absl::StatusCode::kInvalidArgument);
  record.set_store_shards(1);
  auto job = limited.RecordPruning(record);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->verification().after_common_subgraph(), 7);
  EXPECT_EQ(job->verification().pruned_store_shards(), 1);
}

TEST_F(RuleStoreTest, AnExpiredLeaseGoesToAnotherWorkerAndTheLateReportIsRefused) {
  auto first = rules_->LeaseCandidates(LeaseRequest("slow", 1));
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->leases_size(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto second = rules_->LeaseCandidates(LeaseRequest("fast"));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->leases_size(), 1);
  EXPECT_EQ(second->leases(0).candidate_class().fingerprint(), first->leases(0).candidate_class().fingerprint());
  auto late = rules_->ReportVerdicts(Verify(first->leases(0), "slow", *prover_));
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late->accepted());
  auto on_time = rules_->ReportVerdicts(Verify(second->leases(0), "fast", *prover_));
  ASSERT_TRUE(on_time.ok());
  EXPECT_TRUE(on_time->accepted());
  // Someone else's lease id is refused too.
  auto third = rules_->LeaseCandidates(LeaseRequest("fast"));
  ASSERT_TRUE(third.ok());
  ASSERT_EQ(third->leases_size(), 1);
  auto stolen = rules_->ReportVerdicts(Verify(third->leases(0), "intruder", *prover_));
  ASSERT_TRUE(stolen.ok());
  EXPECT_FALSE(stolen->accepted());
}

TEST_F(RuleStoreTest, ReportClassesHandlesEachReportInOrderAndStopsAtTheFirstBadOne) {
  LeaseCandidatesRequest three = LeaseRequest("w");
  three.set_max_classes(3);
  auto leases = rules_->LeaseCandidates(three);
  ASSERT_TRUE(leases.ok()) << leases.status();
  ASSERT_EQ(leases->leases_size(), 3);
  // One report per class: the second under another worker's name.
  ReportClassesRequest batch;
  *batch.add_reports() = Verify(leases->leases(0), "w", *prover_);
  *batch.add_reports() = Verify(leases->leases(1), "intruder", *prover_);
  auto reply = rules_->ReportClasses(batch);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->reports_size(), 2);
  EXPECT_TRUE(reply->reports(0).accepted());
  EXPECT_FALSE(reply->reports(1).accepted()) << "a lease is reported by its holder only";

  // A report naming a pair its class does not have fails the call; the
  // report before it is stored, the one after it never looked at.
  ReportClassesRequest bad;
  *bad.add_reports() = Verify(leases->leases(1), "w", *prover_);
  ReportVerdictsRequest wrong = Verify(leases->leases(2), "w", *prover_);
  ASSERT_GT(wrong.verdicts_size(), 0);
  wrong.mutable_verdicts(0)->set_source_member(999);
  *bad.add_reports() = wrong;
  *bad.add_reports() = Verify(leases->leases(0), "w", *prover_);
  auto refused = rules_->ReportClasses(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("report 2 of 3"));
  auto again = rules_->ReportVerdicts(Verify(leases->leases(1), "w", *prover_));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->accepted()) << "the first report completed its class";
  auto third = rules_->ReportVerdicts(Verify(leases->leases(2), "w", *prover_));
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->accepted()) << "the bad report released nothing";
}

TEST_F(RuleStoreTest, PartialReportsRenewTheLeaseAndRulesKeepStableIds) {
  auto leases = rules_->LeaseCandidates(LeaseRequest("w", 60000));
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->leases_size(), 1);
  ReportVerdictsRequest report = Verify(leases->leases(0), "w", *prover_);
  report.set_complete(false);
  auto partial = rules_->ReportVerdicts(report);
  ASSERT_TRUE(partial.ok());
  EXPECT_TRUE(partial->accepted());
  report.set_complete(true);
  auto done = rules_->ReportVerdicts(report);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->accepted());
  // The same verdicts twice are one rule per pair, at revision 2.
  auto id = RuleId(report.verdicts(0).rule());
  ASSERT_TRUE(id.ok());
  auto rule = rules_->GetRule(*id);
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->revision(), 2u);
  EXPECT_EQ(rules_->GetRule("rnothere").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RuleStoreTest, PutRulesDetectsConcurrentWrites) {
  auto leases = rules_->LeaseCandidates(LeaseRequest("w"));
  ASSERT_TRUE(leases.ok());
  ReportVerdictsRequest report = Verify(leases->leases(0), "w", *prover_);
  PutRulesRequest put;
  *put.add_rules() = report.verdicts(0).rule();
  auto created = rules_->PutRules(put);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->created(), 1);
  auto stored = rules_->GetRule(created->ids(0));
  ASSERT_TRUE(stored.ok());
  PutRulesRequest stale;
  *stale.add_rules() = *stored;
  stale.mutable_rules(0)->set_revision(stored->revision() + 5);
  EXPECT_EQ(rules_->PutRules(stale).status().code(), absl::StatusCode::kAborted);
  stale.mutable_rules(0)->set_revision(stored->revision());
  auto updated = rules_->PutRules(stale);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->updated(), 1);
  PutRulesRequest broken;
  broken.add_rules()->mutable_source()->add_nodes()->set_kind(ir::OP_RELU);
  EXPECT_EQ(rules_->PutRules(broken).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RuleStoreTest, AStoreWithoutACheckerRefusesProvedAndNoStoreTakesPruned) {
  RuleStore unchecked(store_.get());
  PutRulesRequest put;
  *put.add_rules() = Planted(kTrueRule);
  auto refused = unchecked.PutRules(put);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("submit it as candidate"));
  auto id = RuleId(put.rules(0));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(unchecked.GetRule(*id).status().code(), absl::StatusCode::kNotFound);
  // Pruned is the store's own verdict, whatever checker it has.
  put.mutable_rules(0)->set_status(rules::RULE_STATUS_PRUNED);
  for (RuleStore* store : {&unchecked, rules_.get()}) {
    auto pruned = store->PutRules(put);
    EXPECT_EQ(pruned.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(pruned.status().message(), HasSubstr("pruned"));
  }
  EXPECT_EQ(rules_->GetRule(*id).status().code(), absl::StatusCode::kNotFound);
  // Any other status is stored as it came: it serves nobody.
  put.mutable_rules(0)->set_status(rules::RULE_STATUS_CANDIDATE);
  ASSERT_TRUE(unchecked.PutRules(put).ok());
  auto stored = unchecked.GetRule(*id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->status(), rules::RULE_STATUS_CANDIDATE);
}

TEST_F(RuleStoreTest, ARuleClaimedProvedIsProvedAgainByTheStore) {
  PutRulesRequest put;
  *put.add_rules() = Planted(kTrueRule);
  auto created = rules_->PutRules(put);
  ASSERT_TRUE(created.ok()) << created.status();
  auto stored = rules_->GetRule(created->ids(0));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->status(), rules::RULE_STATUS_PROVED);
  // Status and proof are the store's, none of the client's.
  EXPECT_THAT(stored->proof().axioms_used(), ::testing::Not(::testing::Contains("forged")));
  EXPECT_FALSE(stored->proof().axioms_used().empty());
  EXPECT_EQ(stored->proof().solver(), verifier::SolverName());
  EXPECT_EQ(stored->proof().axiom_set_version(), checker_prover_->axiom_set_version());
  EXPECT_NE(stored->status_detail(), "trust me");
  EXPECT_EQ(stored->provenance().verifier_worker_id(), "taso_rules_db");
}

// Chosen: a false claim refuses the whole request (nothing is written), so
// the client learns its claim was wrong instead of finding a quieter status.
TEST_F(RuleStoreTest, AFalseRuleClaimedProvedIsRefusedAndNotStored) {
  PutRulesRequest put;
  *put.add_rules() = Planted(kTrueRule);
  *put.add_rules() = Planted(kFalseRule);
  auto refused = rules_->PutRules(put);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("rule 1"));
  EXPECT_THAT(refused.status().message(), HasSubstr("did not prove it"));
  EXPECT_THAT(refused.status().message(), HasSubstr("REJECTED_PRECHECK"));
  for (const rules::Rule& rule : put.rules()) {
    auto id = RuleId(rule);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(rules_->GetRule(*id).status().code(), absl::StatusCode::kNotFound);
  }
  auto served = rules_->ListRules(ListRulesRequest());
  ASSERT_TRUE(served.ok());
  EXPECT_EQ(served->rules_size(), 0);
  // Sent with the status it has, the false rule is kept for inspection.
  rules::Rule rejected = ParseRule(kFalseRule);
  rejected.set_status(rules::RULE_STATUS_REJECTED_PRECHECK);
  PutRulesRequest honest;
  *honest.add_rules() = rejected;
  ASSERT_TRUE(rules_->PutRules(honest).ok());
}

TEST_F(RuleStoreTest, ARuleUnderAnotherRulesIdIsRefused) {
  PutRulesRequest put;
  *put.add_rules() = ParseRule(kTrueRule);
  auto created = rules_->PutRules(put);
  ASSERT_TRUE(created.ok()) << created.status();
  PutRulesRequest other;
  *other.add_rules() = ParseRule(kFalseRule);
  other.mutable_rules(0)->set_id(created->ids(0));
  auto refused = rules_->PutRules(other);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("is not the id of its graphs"));
}

TEST_F(RuleStoreTest, AVerdictMustBeAboutAPairOfTheLeasedClass) {
  auto leases = rules_->LeaseCandidates(LeaseRequest("w"));
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->leases_size(), 1);
  const ReportVerdictsRequest honest = Verify(leases->leases(0), "w", *prover_);
  ASSERT_GT(honest.verdicts_size(), 0);
  // A proved rule about graphs outside the lease, under a real pair's indices.
  ReportVerdictsRequest foreign = honest;
  rules::Rule planted = Planted(kTrueRule);
  planted.clear_proof();
  *foreign.mutable_verdicts(0)->mutable_rule() = planted;
  auto refused = rules_->ReportVerdicts(foreign);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("is not the pair's rule"));
  // A pair the class does not have.
  ReportVerdictsRequest no_pair = honest;
  no_pair.mutable_verdicts(0)->set_target_member(1000);
  EXPECT_THAT(rules_->ReportVerdicts(no_pair).status().message(), HasSubstr("no such candidate pair"));
  // Pruned is the store's status.
  ReportVerdictsRequest pruned = honest;
  pruned.mutable_verdicts(0)->mutable_rule()->set_status(rules::RULE_STATUS_PRUNED);
  EXPECT_EQ(rules_->ReportVerdicts(pruned).status().code(), absl::StatusCode::kInvalidArgument);
  // Nothing was written, and the lease still takes the honest report.
  auto planted_id = RuleId(planted);
  ASSERT_TRUE(planted_id.ok());
  EXPECT_EQ(rules_->GetRule(*planted_id).status().code(), absl::StatusCode::kNotFound);
  auto id = RuleId(honest.verdicts(0).rule());
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(rules_->GetRule(*id).status().code(), absl::StatusCode::kNotFound);
  auto accepted = rules_->ReportVerdicts(honest);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_TRUE(accepted->accepted());
}

// The index of a verdict the verifier proved, or -1.
int FirstProved(const ReportVerdictsRequest& report) {
  for (int i = 0; i < report.verdicts_size(); ++i) {
    if (report.verdicts(i).rule().status() == rules::RULE_STATUS_PROVED) return i;
  }
  return -1;
}

TEST_F(RuleStoreTest, AProvedVerdictIsStoredWithTheStoresOwnProof) {
  auto leases = rules_->LeaseCandidates(LeaseRequest("w"));
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->leases_size(), 1);
  ReportVerdictsRequest report = Verify(leases->leases(0), "w", *prover_);
  const int i = FirstProved(report);
  ASSERT_GE(i, 0);
  // What the verifier says about its proof beyond the conditions is not kept.
  report.mutable_verdicts(i)->mutable_rule()->mutable_proof()->add_axioms_used("forged");
  report.mutable_verdicts(i)->mutable_rule()->set_status_detail("trust me");
  auto accepted = rules_->ReportVerdicts(report);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_TRUE(accepted->accepted());
  auto id = RuleId(report.verdicts(i).rule());
  ASSERT_TRUE(id.ok());
  auto stored = rules_->GetRule(*id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->status(), rules::RULE_STATUS_PROVED);
  EXPECT_NE(stored->status_detail(), "trust me");
  for (const std::string& axiom : stored->proof().axioms_used()) EXPECT_NE(axiom, "forged");
  EXPECT_EQ(stored->proof().axiom_set_version(), checker_prover_->axiom_set_version());
  EXPECT_EQ(stored->provenance().verifier_worker_id(), "w");
}

TEST_F(RuleStoreTest, AVerdictWithWidenedConditionsIsRefusedWhole) {
  auto leases = rules_->LeaseCandidates(LeaseRequest("w"));
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->leases_size(), 1);
  const ReportVerdictsRequest honest = Verify(leases->leases(0), "w", *prover_);
  const int i = FirstProved(honest);
  ASSERT_GE(i, 0);
  // A fact left open that the proof needed: the rule would apply anywhere.
  ReportVerdictsRequest widened = honest;
  rules::SideConditions* conditions = widened.mutable_verdicts(i)->mutable_rule()->mutable_conditions();
  ASSERT_GT(conditions->source_size(), 0);
  ASSERT_GT(conditions->source(0).signatures_size(), 0);
  rules::ProofSignature* sig = conditions->mutable_source(0)->mutable_signatures(0);
  if (sig->params_size() == 0) sig->add_params(0);
  sig->set_params(0, FactVariable(0));
  auto refused = rules_->ReportVerdicts(widened);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("side conditions are not the ones the store's own proof derives"));
  // No conditions at all (a claim with the proof left out) is as far off.
  ReportVerdictsRequest bare = honest;
  bare.mutable_verdicts(i)->mutable_rule()->clear_conditions();
  EXPECT_EQ(rules_->ReportVerdicts(bare).status().code(), absl::StatusCode::kInvalidArgument);
  // Nothing was written; the honest report is still taken.
  for (const PairVerdict& v : honest.verdicts()) {
    auto id = RuleId(v.rule());
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(rules_->GetRule(*id).status().code(), absl::StatusCode::kNotFound);
  }
  auto accepted = rules_->ReportVerdicts(honest);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_TRUE(accepted->accepted());
}

TEST_F(RuleStoreTest, AStoreWithoutACheckerTakesNoProvedVerdict) {
  RuleStore unchecked(store_.get(), RuleStoreOptions());
  auto leases = unchecked.LeaseCandidates(LeaseRequest("w"));
  ASSERT_TRUE(leases.ok());
  ASSERT_EQ(leases->leases_size(), 1);
  const ReportVerdictsRequest report = Verify(leases->leases(0), "w", *prover_);
  ASSERT_GE(FirstProved(report), 0);
  auto refused = unchecked.ReportVerdicts(report);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("takes no proof on trust"));
}

// Forged records: graphs that are not equal (x1+x2 against x1*x2, x1@w1
// against x1*x2), sent to `store` under one fingerprint each, as a hash
// collision would, for a job "j" that ends GENERATED.
void InjectCollisions(GraphHashStore& store) {
  const generator::GenerationSpec proto = SmallSpec(kSize);
  auto spec = records::SpecFromProto(proto);
  ASSERT_TRUE(spec.ok());
  CreateJobRequest create;
  create.set_job_id("j");
  *create.mutable_spec() = proto;
  create.set_num_shards(1);
  ASSERT_TRUE(store.CreateJob(create).ok());
  auto template_index = [&](OpKind kind) {
    for (size_t t = 0; t < spec->templates.size(); ++t) {
      if (spec->templates[t].kind == kind) return static_cast<int>(t);
    }
    return -1;
  };
  const int n = static_cast<int>(spec->variables.size());  // pool: x1 x2 x3 w1, then ops
  auto encode = [](std::vector<std::pair<int, std::vector<int>>> ops) {
    std::string e;
    for (auto& [t, in] : ops) records::AppendEncodedOp(t, in.data(), static_cast<int>(in.size()), e);
    return e;
  };
  const std::vector<std::pair<std::string, std::string>> forged = {
      {encode({{template_index(OpKind::kEwAdd), {0, 1}}}), encode({{template_index(OpKind::kEwMul), {0, 1}}})},
      {encode({{template_index(OpKind::kMatMul), {0, n - 1}}}), encode({{template_index(OpKind::kEwMul), {0, 1}}})},
  };
  GraphBatch batch;
  batch.set_job_id("j");
  batch.set_sequence(1);
  for (size_t i = 0; i < forged.size(); ++i) {
    const std::string fp(records::kFingerprintBytes, static_cast<char>(0x10 + i));
    records::AppendPackedRecord(fp, forged[i].first, *batch.mutable_packed());
    records::AppendPackedRecord(fp, forged[i].second, *batch.mutable_packed());
  }
  ASSERT_TRUE(store.PutBatch(batch).ok());
  ASSERT_TRUE(store.ReportProgress(Done("j", 0)).ok());
  Job job = WaitGenerated(store, "j");
  ASSERT_EQ(job.state(), JOB_STATE_GENERATED);
}

TEST(RuleStoreInjected, NonEquivalentPairsAreNeverProved) {
  // The store's re-check rejects forged collisions, and a proof attempt
  // without it (the verifier on its own) does not prove them either.
  auto store = OpenStore(TempDir("injected"));
  auto spec = records::SpecFromProto(SmallSpec(kSize));
  ASSERT_TRUE(spec.ok());
  InjectCollisions(*store);
  auto generated = store->GetJob("j");
  ASSERT_TRUE(generated.ok());
  ASSERT_EQ(generated->rejected_pairs(), 2);

  RuleStore rules(store.get());
  auto prover = verifier::Prover::Create();
  ASSERT_TRUE(prover.ok());
  int checked = 0;
  while (true) {
    auto leases = rules.LeaseCandidates(LeaseRequest("w"));
    ASSERT_TRUE(leases.ok());
    if (leases->leases().empty()) break;
    const CandidateClass& c = leases->leases(0).candidate_class();
    for (CandidatePair pair : c.pairs()) {
      EXPECT_TRUE(pair.rejected());
      EXPECT_THAT(pair.reason(), HasSubstr("int32"));
      // Without the re-check: map the outputs one to one and try to prove.
      pair.set_rejected(false);
      pair.clear_output_mapping();
      pair.add_output_mapping(0);
      auto graphs = verifier::DecodeCandidate(*spec, c, pair);
      ASSERT_TRUE(graphs.ok()) << graphs.status();
      auto result = (*prover)->Prove(graphs->source, graphs->target, graphs->outputs);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_NE(result->outcome, verifier::ProofOutcome::kProved);
      ++checked;
    }
    // A verifier claiming a proof of a pair the re-check rejected is refused.
    ReportVerdictsRequest report = Verify(leases->leases(0), "w", **prover);
    ReportVerdictsRequest claim = report;
    claim.mutable_verdicts(0)->mutable_rule()->set_status(rules::RULE_STATUS_PROVED);
    auto refused = rules.ReportVerdicts(claim);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(refused.status().message(), HasSubstr("re-check rejected"));
    ASSERT_TRUE(rules.ReportVerdicts(report).ok());
  }
  EXPECT_EQ(checked, 2);
  rules.WaitForFinishes();
  auto after = store->GetJob("j");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state(), JOB_STATE_DONE);
  EXPECT_EQ(after->verification().rules_proved(), 0);
  EXPECT_EQ(after->verification().rules_rejected_precheck(), 2);
  // This store was given no pruner, and its job says so.
  EXPECT_THAT(after->verification().note(), HasSubstr("no pruner"));
}

TEST(RuleStoreInjected, AProvedVerdictForAFalseRuleIsStoredAsTheStoresOwn) {
  // A collision the exact re-check missed (here: its rejections undone), and
  // a verifier that calls the pair proved: the store's own check decides, and
  // its verdict is what is stored. The class is done: a refusal would lease
  // it again, to the same claim, and stop every verifier in turn.
  HashStoreOptions options;
  options.path = TempDir("missed");
  options.write_buffer_mb = 4;
  options.class_checker = [](const records::Spec& spec) -> records::ClassChecker {
    records::ClassChecker recheck = generator::RecheckerFor(spec);
    return [recheck](const std::vector<std::string>& members) {
      records::ClassCheck check = recheck(members);
      for (records::PairCheck& pair : check.pairs) {
        pair.rejected = false;
        pair.reason.clear();
        if (pair.output_mapping.empty()) pair.output_mapping = {0};
      }
      return check;
    };
  };
  auto opened = GraphHashStore::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<GraphHashStore> store = std::move(*opened);
  InjectCollisions(*store);
  auto checker_prover = verifier::Prover::Create();
  ASSERT_TRUE(checker_prover.ok());
  RuleStoreOptions rule_options;
  rule_options.checker = [&](rules::Rule& rule) {
    return verifier::VerifyClaim(**checker_prover, verifier::SolverName(), rule);
  };
  RuleStore rules(store.get(), rule_options);
  auto prover = verifier::Prover::Create();
  ASSERT_TRUE(prover.ok());
  int false_claims = 0;
  while (true) {
    auto leases = rules.LeaseCandidates(LeaseRequest("w"));
    ASSERT_TRUE(leases.ok());
    if (leases->leases().empty()) break;
    const ReportVerdictsRequest honest = Verify(leases->leases(0), "w", **prover);
    ASSERT_EQ(honest.verdicts_size(), 1);
    EXPECT_NE(honest.verdicts(0).rule().status(), rules::RULE_STATUS_PROVED);
    ReportVerdictsRequest claim = honest;
    claim.mutable_verdicts(0)->mutable_rule()->set_status(rules::RULE_STATUS_PROVED);
    auto stored = rules.ReportVerdicts(claim);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_TRUE(stored->accepted());
    ++false_claims;
    // The class is done: the honest report comes too late to count.
    auto late = rules.ReportVerdicts(honest);
    EXPECT_FALSE(late.ok() && late->accepted());
  }
  EXPECT_EQ(false_claims, 2);
  rules.WaitForFinishes();
  auto after = store->GetJob("j");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state(), JOB_STATE_DONE);
  EXPECT_EQ(after->verification().rules_proved(), 0);
  EXPECT_EQ(after->verification().rules_rejected_precheck(), 2) << "the store's check found both different";
}

}  // namespace
}  // namespace taso::rules_db
