// The rule store proving one candidate pair per form: pairs whose rule renames
// an earlier pair's are not leased, and their verdicts, derived when the job's
// classes are verified, are the ones their own proofs give.
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "records/rule_id.h"
#include "rules_db/rule_store.h"
#include "rules_db/test_util.h"
#include "rules_db/verify_test_util.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/pruning.h"
#include "verifier/renaming_proof.h"

namespace taso::rules_db {
namespace {

using ::testing::HasSubstr;

constexpr int kSize = 3;

class RenamingStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto* p : {&prover_, &checker_prover_}) {
      auto made = verifier::Prover::Create();
      ASSERT_TRUE(made.ok()) << made.status();
      *p = std::move(*made);
    }
  }

  // A store as taso_rules_db makes it, with or without renaming_prover.
  RuleStoreOptions Options(bool once_per_form, bool from_smaller = true) {
    RuleStoreOptions options;
    options.derive_from_smaller = from_smaller;
    options.checker = [this](rules::Rule& rule) {
      return verifier::VerifyClaim(*checker_prover_, verifier::SolverName(), rule);
    };
    options.pruner = verifier::PruneRules;
    if (once_per_form) options.renaming_prover = verifier::RenamingProverFor;
    return options;
  }

  // Leases, verifies and reports every class; returns the pairs leased (and
  // counts the classes leased in `classes`). The store finishes the job on a
  // thread of its own, which may still be running on return.
  int64_t ReportEveryClass(RuleStore& rules, bool once_per_form, int64_t* classes = nullptr) {
    int64_t pairs = 0;
    while (true) {
      auto leases = rules.LeaseCandidates(LeaseRequest("w"));
      EXPECT_TRUE(leases.ok()) << leases.status();
      if (!leases.ok() || leases->leases().empty()) break;
      if (classes != nullptr) ++*classes;
      if (once_per_form) {
        EXPECT_GT(leases->leases(0).candidate_class().pairs_size(), 0) << "a class with nothing to prove was leased";
      }
      for (const CandidatePair& p : leases->leases(0).candidate_class().pairs()) {
        if (once_per_form) {
          EXPECT_TRUE(p.renaming_of().empty()) << "a pair of a form already leased was leased";
        }
        ++pairs;
      }
      auto reply = rules.ReportVerdicts(Verify(leases->leases(0), "w", *prover_, kSize));
      EXPECT_TRUE(reply.ok()) << reply.status();
      if (!reply.ok()) break;
      EXPECT_TRUE(reply->accepted());
    }
    return pairs;
  }

  // ReportEveryClass, then waits until the store has finished the job.
  int64_t VerifyEveryClass(RuleStore& rules, bool once_per_form, int64_t* classes = nullptr) {
    const int64_t pairs = ReportEveryClass(rules, once_per_form, classes);
    rules.WaitForFinishes();
    return pairs;
  }

  static std::map<std::string, rules::Rule> JobRules(RuleStore& rules) {
    std::map<std::string, rules::Rule> out;
    EXPECT_TRUE(rules.ForEachJobRule("j", [&](const rules::Rule& r) {
      out[r.id()] = r;
      return absl::OkStatus();
    }).ok());
    return out;
  }

  std::unique_ptr<verifier::Prover> prover_, checker_prover_;
};

TEST_F(RenamingStoreTest, OnePairPerFormIsProvedAndTheOthersGetTheVerdictsTheirOwnProofsGive) {
  auto once_store = OpenStore(TempDir("once_per_form"));
  auto every_store = OpenStore(TempDir("every_pair"));
  ASSERT_NE(once_store, nullptr);
  ASSERT_NE(every_store, nullptr);
  const Job job = RunJob(*once_store, SmallSpec(kSize), "j");
  ASSERT_EQ(RunJob(*every_store, SmallSpec(kSize), "j").renaming_pairs(), job.renaming_pairs());
  ASSERT_GT(job.renaming_pairs(), 5) << "three interchangeable inputs: several renamings";
  ASSERT_GT(job.instance_pairs(), 5) << "and laws with an input twice, instances of laws with two";
  ASSERT_GT(job.from_smaller_rule_pairs(), 5) << "and laws beside an operator both sides compute";
  const int64_t derivable = job.renaming_pairs() + job.instance_pairs() + job.from_smaller_rule_pairs();

  RuleStore once(once_store.get(), Options(true));
  RuleStore every(every_store.get(), Options(false));
  int64_t once_classes = 0, every_classes = 0;
  const int64_t once_pairs = VerifyEveryClass(once, true, &once_classes);
  const int64_t every_pairs = VerifyEveryClass(every, false, &every_classes);
  EXPECT_EQ(every_pairs - once_pairs, derivable);
  // A class whose every pair renames or merges another form is not leased at all.
  EXPECT_EQ(every_classes, job.candidate_classes());
  EXPECT_LT(once_classes, every_classes);

  auto once_job = once_store->GetJob("j");
  auto every_job = every_store->GetJob("j");
  ASSERT_TRUE(once_job.ok() && every_job.ok());
  ASSERT_EQ(once_job->state(), JOB_STATE_DONE);
  const Verification& v = once_job->verification();
  const Verification& w = every_job->verification();
  EXPECT_GT(v.rules_proved_as_renaming(), 0);
  EXPECT_LE(v.rules_proved_as_renaming(), derivable);
  EXPECT_EQ(v.renamings_proved_alone(), 0);
  EXPECT_EQ(w.rules_proved_as_renaming(), 0);
  EXPECT_GT(v.rules_proved_from_smaller(), 0);
  EXPECT_LE(v.rules_proved_from_smaller(), job.from_smaller_rule_pairs());
  // The same table...
  EXPECT_EQ(v.rules_proved(), w.rules_proved());
  EXPECT_EQ(v.rules_unknown(), w.rules_unknown());
  EXPECT_EQ(v.after_renaming(), w.after_renaming());
  EXPECT_EQ(v.after_common_subgraph(), w.after_common_subgraph());
  // ... rule for rule: every status and every side condition. (A rule
  // derived from a smaller one has its other operators' conditions on its own
  // shapes, where a proof of its own may leave a fact open: stricter, never
  // wider. This spec has no such fact, so they are equal here.)
  const auto derived = JobRules(once);
  const auto proved = JobRules(every);
  ASSERT_EQ(derived.size(), proved.size());
  for (const auto& [id, rule] : derived) {
    auto it = proved.find(id);
    ASSERT_NE(it, proved.end()) << id;
    auto own_id = records::RuleId(rule);  // the prover's, from the pair's graphs, is the rule's own
    ASSERT_TRUE(own_id.ok()) << own_id.status();
    EXPECT_EQ(*own_id, id);
    EXPECT_EQ(rule.status(), it->second.status()) << id;
    EXPECT_EQ(rule.conditions().DebugString(), it->second.conditions().DebugString()) << id;
    // The verifier whose proof it stands on, as for a rule proved alone.
    EXPECT_EQ(rule.provenance().verifier_worker_id(), "w") << id;
    if (rule.status() == rules::RULE_STATUS_PROVED || rule.status() == rules::RULE_STATUS_PRUNED) {
      EXPECT_FALSE(rule.proof().axioms_used().empty()) << id;
    }
  }
  // Each derived pair names a rule of the job. (Not always of an earlier
  // class: a general form may come later than its instances; verdicts are
  // derived once every class is verified.)
  auto fingerprints = once_store->ClassFingerprints("j");
  ASSERT_TRUE(fingerprints.ok());
  int64_t named = 0, from_smaller = 0;
  for (const std::string& fp : *fingerprints) {
    auto c = once_store->GetCandidateClass("j", fp);
    ASSERT_TRUE(c.ok());
    for (const CandidatePair& p : c->pairs()) {
      if (p.renaming_of().empty()) continue;
      ++named;
      auto first = derived.find(p.renaming_of());
      ASSERT_NE(first, derived.end()) << p.renaming_of();
      // Derived under the id the re-check named it by (checked above to be
      // the rule's own).
      EXPECT_EQ(derived.count(p.rule_id()), 1u) << "pair named " << p.rule_id();
      if (p.derivation() != DERIVATION_FROM_SMALLER_RULE) continue;
      // A smaller rule proved on its own (leased), not derived itself: its
      // verdict is there before this one is derived.
      ++from_smaller;
      EXPECT_THAT(first->second.status_detail(), ::testing::Not(HasSubstr("proved as"))) << p.renaming_of();
    }
  }
  EXPECT_EQ(named, derivable);
  EXPECT_EQ(from_smaller, job.from_smaller_rule_pairs());
}

TEST_F(RenamingStoreTest, WithoutDerivingFromSmallerRulesTheirPairsAreLeasedAndTheRulesAreTheSame) {
  auto on_store = OpenStore(TempDir("from_smaller"));
  auto off_store = OpenStore(TempDir("not_from_smaller"));
  ASSERT_NE(on_store, nullptr);
  ASSERT_NE(off_store, nullptr);
  const Job job = RunJob(*on_store, SmallSpec(kSize), "j");
  ASSERT_EQ(RunJob(*off_store, SmallSpec(kSize), "j").from_smaller_rule_pairs(), job.from_smaller_rule_pairs());
  ASSERT_GT(job.from_smaller_rule_pairs(), 5);
  RuleStore on(on_store.get(), Options(true));
  RuleStore off(off_store.get(), Options(true, false));
  const int64_t on_pairs = VerifyEveryClass(on, true);
  const int64_t off_pairs = VerifyEveryClass(off, false);  // leases pairs that name a smaller rule
  EXPECT_EQ(off_pairs - on_pairs, job.from_smaller_rule_pairs());
  auto on_job = on_store->GetJob("j");
  auto off_job = off_store->GetJob("j");
  ASSERT_TRUE(on_job.ok() && off_job.ok());
  const Verification& v = on_job->verification();
  const Verification& w = off_job->verification();
  EXPECT_EQ(v.rules_proved_from_smaller(), job.from_smaller_rule_pairs());
  EXPECT_EQ(w.rules_proved_from_smaller(), 0);
  EXPECT_EQ(w.renamings_proved_alone(), 0);
  EXPECT_EQ(v.rules_proved(), w.rules_proved());
  EXPECT_EQ(v.after_renaming(), w.after_renaming());
  EXPECT_EQ(v.after_common_subgraph(), w.after_common_subgraph());
  const auto derived = JobRules(on);
  const auto proved = JobRules(off);
  ASSERT_EQ(derived.size(), proved.size());
  for (const auto& [id, rule] : derived) {
    auto it = proved.find(id);
    ASSERT_NE(it, proved.end()) << id;
    EXPECT_EQ(rule.status(), it->second.status()) << id;
  }
}

TEST_F(RenamingStoreTest, AVerdictForAPairOfAFormAlreadyLeasedIsRefused) {
  auto store = OpenStore(TempDir("refused"));
  ASSERT_NE(store, nullptr);
  ASSERT_GT(RunJob(*store, SmallSpec(kSize), "j").renaming_pairs(), 0);
  RuleStore rules(store.get(), Options(true));
  // A class with a pair not leased: its stored copy has it, the lease not.
  auto fingerprints = store->ClassFingerprints("j");
  ASSERT_TRUE(fingerprints.ok());
  int tried = 0;
  while (tried == 0) {
    auto leases = rules.LeaseCandidates(LeaseRequest("w"));
    ASSERT_TRUE(leases.ok()) << leases.status();
    ASSERT_FALSE(leases->leases().empty()) << "no class with a renaming";
    const Lease& lease = leases->leases(0);
    auto stored = store->GetCandidateClass("j", lease.candidate_class().fingerprint());
    ASSERT_TRUE(stored.ok());
    ReportVerdictsRequest report = Verify(lease, "w", *prover_, kSize);
    for (const CandidatePair& p : stored->pairs()) {
      if (p.renaming_of().empty()) continue;
      // What an honest worker would report for it, with the stored class.
      Lease whole = lease;
      *whole.mutable_candidate_class() = *stored;
      whole.mutable_candidate_class()->set_job_id("j");
      const ReportVerdictsRequest honest = Verify(whole, "w", *prover_, kSize);
      for (const PairVerdict& v : honest.verdicts()) {
        if (v.source_member() == p.source_member() && v.target_member() == p.target_member()) {
          ReportVerdictsRequest extra = report;
          *extra.add_verdicts() = v;
          auto refused = rules.ReportVerdicts(extra);
          EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
          EXPECT_THAT(refused.status().message(), HasSubstr("no such candidate pair"));
          ++tried;
        }
      }
      break;
    }
    ASSERT_TRUE(rules.ReportVerdicts(report).ok());
  }
}

// A rule's renamings lie in classes all over the key space; the store
// derives them one after another, so the rule is read and given its form once
// for them all, not once for each class it has a renaming in.
TEST_F(RenamingStoreTest, EachRulesRenamingsAreDerivedOneAfterAnother) {
  auto store = OpenStore(TempDir("grouped"));
  ASSERT_NE(store, nullptr);
  ASSERT_GT(RunJob(*store, SmallSpec(kSize), "j").renaming_pairs(), 0);
  // Which classes each rule has a renaming in, as the store keeps them.
  std::map<std::string, std::set<std::string>> classes_of;
  std::set<std::pair<std::string, int>> groups;  // what the store derives from, and how
  int64_t derivable = 0;
  auto fingerprints = store->ClassFingerprints("j");
  ASSERT_TRUE(fingerprints.ok());
  for (const std::string& fp : *fingerprints) {
    auto c = store->GetCandidateClass("j", fp);
    ASSERT_TRUE(c.ok());
    for (const CandidatePair& p : c->pairs()) {
      if (p.renaming_of().empty() || p.rejected()) continue;
      classes_of[p.renaming_of()].insert(fp);
      groups.insert({p.renaming_of(), p.derivation()});
      ++derivable;
    }
  }
  int64_t spread = 0;
  for (const auto& [id, classes] : classes_of) spread += classes.size() > 1 ? 1 : 0;
  ASSERT_GT(spread, 0) << "no rule has renamings in two classes: the test shows nothing";

  std::vector<std::string> asked;  // the rule each derivation was given, in order
  RuleStoreOptions options = Options(true);
  options.finish_threads = 1;
  int64_t provers = 0;  // provers made: one per rule derived from
  options.renaming_prover = [&](const rules::Rule& other) -> records::PairProver {
    ++provers;
    return [&, prove = verifier::RenamingProverFor(other), id = other.id()](
               const records::Spec& spec, const CandidateClass& c, const CandidatePair& pair) {
      asked.push_back(id);
      return prove(spec, c, pair);
    };
  };
  RuleStore rules(store.get(), options);
  VerifyEveryClass(rules, true);
  auto job = store->GetJob("j");
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->state(), JOB_STATE_DONE);
  ASSERT_EQ(static_cast<int64_t>(asked.size()), derivable);
  // One run of derivations per rule.
  std::set<std::string> finished;
  for (size_t i = 0; i < asked.size(); ++i) {
    if (i > 0 && asked[i] != asked[i - 1]) finished.insert(asked[i - 1]);
    EXPECT_EQ(finished.count(asked[i]), 0u) << asked[i] << " is derived from again after another rule";
  }
  EXPECT_EQ(finished.size() + 1, classes_of.size());
  // One prover per rule and derivation (the rounds), each given all its pairs.
  EXPECT_EQ(provers, static_cast<int64_t>(groups.size()));
  // Every one proved as a renaming (the first test compares them rule for rule).
  EXPECT_EQ(job->verification().renamings_proved_alone(), 0);
  EXPECT_GT(job->verification().rules_proved_as_renaming(), 0);
}

// Deriving and pruning a large job takes minutes (7.7 at size 4): the store
// does it on a thread of its own, so the report that completed the job is
// answered at once (a verifier waits 30-60 s for it), and leases too, while
// the job says which stage it is at.
TEST_F(RenamingStoreTest, TheLastReportAndLeasesAreAnsweredWhileTheStoreDerivesTheRenamings) {
  auto store = OpenStore(TempDir("background"));
  ASSERT_NE(store, nullptr);
  ASSERT_GT(RunJob(*store, SmallSpec(kSize), "j").renaming_pairs(), 0);
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  RuleStoreOptions options = Options(true);
  options.renaming_prover = [&](const rules::Rule& other) -> records::PairProver {
    return [&, prove = verifier::RenamingProverFor(other)](const records::Spec& spec, const CandidateClass& c,
                                                           const CandidatePair& pair) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return released; });
      return prove(spec, c, pair);
    };
  };
  RuleStore rules(store.get(), options);
  // Every report returns while the derivation is held back (it would hang here otherwise).
  int64_t classes = 0;
  ReportEveryClass(rules, true, &classes);
  ASSERT_GT(classes, 0);
  auto poll = rules.LeaseCandidates(LeaseRequest("poller"));
  ASSERT_TRUE(poll.ok()) << poll.status();
  EXPECT_TRUE(poll->leases().empty());
  // The stage is recorded before the last report is answered.
  auto during = store->GetJob("j");
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->state(), JOB_STATE_VERIFYING) << "DONE only once the renamings are derived and pruned";
  EXPECT_EQ(during->verification().finish_stage(), FINISH_STAGE_DERIVING);
  EXPECT_EQ(during->verification().classes_verified(), during->verification().classes_total());
  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  rules.WaitForFinishes();
  auto after = store->GetJob("j");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state(), JOB_STATE_DONE);
  EXPECT_EQ(after->verification().finish_stage(), FINISH_STAGE_NONE);
  EXPECT_GT(after->verification().rules_proved_as_renaming(), 0);
}

// A job that fails to finish says why, in the job and the store's log, and
// keeps every verdict: a restarted store finishes it.
TEST_F(RenamingStoreTest, AFailedFinishIsRecordedAndARestartedStoreFinishesTheJob) {
  auto store = OpenStore(TempDir("failed_finish"));
  ASSERT_NE(store, nullptr);
  ASSERT_GT(RunJob(*store, SmallSpec(kSize), "j").renaming_pairs(), 0);
  std::vector<std::string> logged;
  {
    RuleStoreOptions options = Options(true);
    options.renaming_prover = [](const rules::Rule&) -> records::PairProver {
      return [](const records::Spec&, const CandidateClass&,
                const CandidatePair&) -> absl::StatusOr<records::RenamingVerdict> {
        return absl::InternalError("the derivation broke");
      };
    };
    options.log = [&](const std::string& line) { logged.push_back(line); };
    RuleStore failing(store.get(), options);
    VerifyEveryClass(failing, true);
  }
  auto failed = store->GetJob("j");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->state(), JOB_STATE_VERIFYING);
  EXPECT_EQ(failed->verification().finish_stage(), FINISH_STAGE_FAILED);
  EXPECT_THAT(failed->verification().finish_error(), HasSubstr("the derivation broke"));
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_THAT(logged[0], HasSubstr("restart the store"));

  // A restarted store starts finishing before it serves: no client reads the old failure.
  RuleStore restarted(store.get(), Options(true));
  ASSERT_TRUE(restarted.ResumeFinishing().ok());
  auto resumed = store->GetJob("j");
  ASSERT_TRUE(resumed.ok());
  EXPECT_NE(resumed->verification().finish_stage(), FINISH_STAGE_FAILED);
  EXPECT_TRUE(resumed->verification().finish_error().empty());
  auto poll = restarted.LeaseCandidates(LeaseRequest("w"));
  ASSERT_TRUE(poll.ok()) << poll.status();
  EXPECT_TRUE(poll->leases().empty());
  restarted.WaitForFinishes();
  auto done = store->GetJob("j");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state(), JOB_STATE_DONE);
  EXPECT_EQ(done->verification().finish_stage(), FINISH_STAGE_NONE);
  EXPECT_TRUE(done->verification().finish_error().empty());
  EXPECT_GT(done->verification().rules_proved_as_renaming(), 0);
}

// A store closing mid-derivation stops between rules instead of making its
// shutdown wait minutes; it records no failure, and the job is finished later.
TEST_F(RenamingStoreTest, AClosingStoreStopsFinishingAndTheJobIsFinishedLater) {
  auto store = OpenStore(TempDir("closing"));
  ASSERT_NE(store, nullptr);
  ASSERT_GT(RunJob(*store, SmallSpec(kSize), "j").renaming_pairs(), 2);
  std::atomic<int> derived{0};
  std::atomic<bool> entered{false}, release{false};
  {
    RuleStoreOptions options = Options(true);
    options.finish_threads = 1;
    options.renaming_prover = [&](const rules::Rule& other) -> records::PairProver {
      return [&, prove = verifier::RenamingProverFor(other)](const records::Spec& spec, const CandidateClass& c,
                                                             const CandidatePair& pair) {
        entered = true;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++derived;
        return prove(spec, c, pair);
      };
    };
    auto closing = std::make_unique<RuleStore>(store.get(), options);
    ReportEveryClass(*closing, true);
    for (int i = 0; i < 3000 && !entered; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!entered) {
      release = true;  // so that closing does not wait on a held derivation
      FAIL() << "the store did not start deriving";
    }
    // Released once the store is closing: the rule under way ends, no other starts.
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      release = true;
    });
    closing.reset();
    releaser.join();
  }
  auto stopped = store->GetJob("j");
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state(), JOB_STATE_VERIFYING);
  EXPECT_NE(stopped->verification().finish_stage(), FINISH_STAGE_FAILED);
  EXPECT_GT(derived.load(), 0);

  RuleStore restarted(store.get(), Options(true));
  ASSERT_TRUE(restarted.LeaseCandidates(LeaseRequest("w")).ok());
  restarted.WaitForFinishes();
  auto done = store->GetJob("j");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state(), JOB_STATE_DONE);
  EXPECT_GT(done->verification().rules_proved_as_renaming(), 0);
}

}  // namespace
}  // namespace taso::rules_db
