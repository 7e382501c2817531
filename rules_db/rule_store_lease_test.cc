// The rule store's leases under concurrent workers: the store reads the
// classes it leases outside its lock, and still gives each class to exactly
// one worker, and finishes the job once all of them are reported.
#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rules_db/rule_store.h"
#include "rules_db/test_util.h"
#include "rules_db/verify_test_util.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/pruning.h"

namespace taso::rules_db {
namespace {

constexpr int kSize = 3;

// A store that proves reported claims again with `prover` and prunes, as
// taso_rules_db runs it.
RuleStoreOptions CheckingOptions(verifier::Prover& prover) {
  RuleStoreOptions options;
  options.checker = [&prover](rules::Rule& rule) { return verifier::VerifyClaim(prover, verifier::SolverName(), rule); };
  options.pruner = verifier::PruneRules;
  return options;
}

TEST(RuleStoreLeases, WorkersLeasingAtOnceGetEachClassExactlyOnce) {
  auto store = OpenStore(TempDir("concurrent_leases"));
  ASSERT_NE(store, nullptr);
  const Job job = RunJob(*store, SmallSpec(kSize), "j");
  ASSERT_GT(job.candidate_classes(), 20) << "enough classes for the workers to race for";
  auto checker_prover = verifier::Prover::Create();
  ASSERT_TRUE(checker_prover.ok()) << checker_prover.status();
  RuleStoreOptions options = CheckingOptions(**checker_prover);
  RuleStore rules(store.get(), options);

  // Four workers lease three classes at a time until none is left.
  std::mutex mu;
  std::vector<std::pair<std::string, Lease>> leased;  // (worker, lease)
  std::vector<std::string> errors;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      const std::string worker = "w" + std::to_string(w);
      LeaseCandidatesRequest request = LeaseRequest(worker);
      request.set_max_classes(3);
      while (true) {
        auto leases = rules.LeaseCandidates(request);
        std::lock_guard<std::mutex> lock(mu);
        if (!leases.ok()) {
          errors.push_back(std::string(leases.status().message()));
          return;
        }
        if (leases->leases().empty()) return;
        for (const Lease& l : leases->leases()) leased.emplace_back(worker, l);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  std::set<std::string> classes, ids;
  for (const auto& [worker, l] : leased) {
    ids.insert(l.lease_id());
    classes.insert(l.lease_id().substr(0, l.lease_id().rfind('/')));  // "j/<fingerprint>"
  }
  EXPECT_EQ(ids.size(), leased.size()) << "a lease id was given twice";
  EXPECT_EQ(classes.size(), leased.size()) << "a class was leased to two workers";
  EXPECT_EQ(static_cast<int64_t>(leased.size()), job.candidate_classes());

  // Every lease a worker got is one the store holds: reported, the job is done.
  auto poll = rules.LeaseCandidates(LeaseRequest("poller"));
  ASSERT_TRUE(poll.ok()) << poll.status();
  EXPECT_TRUE(poll->leases().empty()) << "every class is leased already";
  auto prover = verifier::Prover::Create();
  ASSERT_TRUE(prover.ok()) << prover.status();
  for (const auto& [worker, l] : leased) {
    auto reply = rules.ReportVerdicts(Verify(l, worker, **prover, kSize));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_TRUE(reply->accepted()) << l.lease_id();
  }
  rules.WaitForFinishes();
  auto done = store->GetJob("j");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), JOB_STATE_DONE);
  EXPECT_EQ(done->verification().classes_verified(), job.candidate_classes());
  EXPECT_GT(done->verification().rules_proved(), 0);
}

// A class every verifier dies or stalls on: its lease expires twice without
// a report, and the store gives it up instead of leasing it a third time.
// Its pairs are stored TIMEOUT with the reason, the rest of the job is
// verified as usual, and a restarted store still counts the class.
TEST(RuleStoreLeases, AClassWhoseLeaseKeepsExpiringIsGivenUpAndTheJobStillFinishes) {
  auto store = OpenStore(TempDir("given_up"));
  ASSERT_NE(store, nullptr);
  const Job job = RunJob(*store, SmallSpec(kSize), "j");
  ASSERT_GT(job.candidate_classes(), 3);
  auto checker_prover = verifier::Prover::Create();
  ASSERT_TRUE(checker_prover.ok()) << checker_prover.status();
  RuleStoreOptions options = CheckingOptions(**checker_prover);
  options.pair_rule = verifier::RuleOfPair;
  options.max_lease_expiries = 2;
  auto rules = std::make_unique<RuleStore>(store.get(), options);

  // Leased twice for a millisecond, never reported.
  auto first = rules->LeaseCandidates(LeaseRequest("dies", 1));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->leases_size(), 1);
  const Lease stuck = first->leases(0);
  const std::string stuck_class = stuck.lease_id().substr(0, stuck.lease_id().rfind('/'));
  absl::SleepFor(absl::Milliseconds(5));
  auto second = rules->LeaseCandidates(LeaseRequest("dies", 1));
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->leases_size(), 1);
  EXPECT_EQ(second->leases(0).lease_id().substr(0, stuck_class.size() + 1), stuck_class + "/")
      << "an expired class is first in line again";
  absl::SleepFor(absl::Milliseconds(5));

  // An honest worker verifies the rest, across a store restart; it is never
  // handed the given-up class.
  auto prover = verifier::Prover::Create();
  ASSERT_TRUE(prover.ok()) << prover.status();
  int reported = 0;
  while (true) {
    if (reported == 2) rules = std::make_unique<RuleStore>(store.get(), options);  // a restart
    auto leases = rules->LeaseCandidates(LeaseRequest("honest"));
    ASSERT_TRUE(leases.ok()) << leases.status();
    if (leases->leases().empty()) break;
    const Lease& l = leases->leases(0);
    ASSERT_NE(l.lease_id().substr(0, stuck_class.size() + 1), stuck_class + "/") << "the given-up class was leased";
    auto reply = rules->ReportVerdicts(Verify(l, "honest", **prover, kSize));
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_TRUE(reply->accepted());
    ++reported;
  }
  EXPECT_EQ(reported, job.candidate_classes() - 1);
  rules->WaitForFinishes();
  auto done = store->GetJob("j");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), JOB_STATE_DONE);
  EXPECT_EQ(done->verification().classes_verified(), job.candidate_classes());
  EXPECT_EQ(done->verification().classes_given_up(), 1) << "counted from its marker after the restart";
  EXPECT_GE(done->verification().rules_timeout() + done->verification().rules_rejected_precheck(),
            stuck.candidate_class().pairs_size());

  auto spec = records::SpecFromProto(SmallSpec(kSize));
  ASSERT_TRUE(spec.ok());
  for (const CandidatePair& pair : stuck.candidate_class().pairs()) {
    auto body = verifier::RuleOfPair(*spec, stuck.candidate_class(), pair);
    ASSERT_TRUE(body.ok()) << body.status();
    auto id = RuleId(*body);
    ASSERT_TRUE(id.ok()) << id.status();
    auto rule = rules->GetRule(*id);
    ASSERT_TRUE(rule.ok()) << rule.status();
    EXPECT_EQ(rule->provenance().job_id(), "j");
    if (pair.rejected()) {
      EXPECT_EQ(rule->status(), rules::RULE_STATUS_REJECTED_PRECHECK);
    } else {
      EXPECT_EQ(rule->status(), rules::RULE_STATUS_TIMEOUT);
      EXPECT_THAT(rule->status_detail(), ::testing::HasSubstr("expired 2 times without a report"));
    }
  }
}

// A worker that stops gives back what it has not finished: the verdicts it
// sent with the release are kept, the class is leased again at once (to the
// next worker, before its lease would have expired), and releases, however
// many, never give a class up.
TEST(RuleStoreLeases, AReleasedClassKeepsItsVerdictsAndIsNeverGivenUpForIt) {
  auto store = OpenStore(TempDir("released"));
  ASSERT_NE(store, nullptr);
  const Job job = RunJob(*store, SmallSpec(kSize), "j");
  auto checker_prover = verifier::Prover::Create();
  ASSERT_TRUE(checker_prover.ok()) << checker_prover.status();
  RuleStoreOptions options = CheckingOptions(**checker_prover);
  options.pair_rule = verifier::RuleOfPair;
  options.max_lease_expiries = 1;
  RuleStore rules(store.get(), options);
  auto prover = verifier::Prover::Create();
  ASSERT_TRUE(prover.ok()) << prover.status();

  // A class with a pair to prove, released three times; the first release
  // carries that pair's verdict.
  std::string released_class;
  rules::Rule kept;
  for (int round = 0; round < 3; ++round) {
    auto leased = rules.LeaseCandidates(LeaseRequest("stopping"));
    ASSERT_TRUE(leased.ok()) << leased.status();
    ASSERT_EQ(leased->leases_size(), 1);
    const Lease& lease = leased->leases(0);
    const std::string cls = lease.lease_id().substr(0, lease.lease_id().rfind('/'));
    if (round == 0) {
      released_class = cls;
    } else {
      EXPECT_EQ(cls, released_class) << "a released class is first in line again";
    }
    ReportVerdictsRequest release = Verify(lease, "stopping", **prover, kSize);
    release.set_complete(false);
    release.set_release(true);
    if (round == 0) {
      // Only the first proved pair goes with it.
      auto proved = std::find_if(release.verdicts().begin(), release.verdicts().end(), [](const PairVerdict& v) {
        return v.rule().status() == rules::RULE_STATUS_PROVED;
      });
      ASSERT_NE(proved, release.verdicts().end()) << "the first class has a provable pair";
      const PairVerdict first = *proved;
      release.clear_verdicts();
      *release.add_verdicts() = first;
      auto id = RuleId(first.rule());
      ASSERT_TRUE(id.ok()) << id.status();
      kept.set_id(*id);
    } else {
      release.clear_verdicts();
    }
    auto reply = rules.ReportVerdicts(release);
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_TRUE(reply->accepted());
    EXPECT_FALSE(reply->has_expires_at()) << "a released lease is not renewed";
    // The lease is over: a report under it is refused.
    ReportVerdictsRequest late = Verify(lease, "stopping", **prover, kSize);
    auto refused = rules.ReportVerdicts(late);
    ASSERT_TRUE(refused.ok()) << refused.status();
    EXPECT_FALSE(refused->accepted());
  }
  auto stored = rules.GetRule(kept.id());
  ASSERT_TRUE(stored.ok()) << "the verdict sent with the release is kept: " << stored.status();
  EXPECT_EQ(stored->status(), rules::RULE_STATUS_PROVED);

  // Every class, the released one included, verified by another worker.
  int reported = 0;
  bool saw_released = false;
  while (true) {
    auto leases = rules.LeaseCandidates(LeaseRequest("honest"));
    ASSERT_TRUE(leases.ok()) << leases.status();
    if (leases->leases().empty()) break;
    const Lease& l = leases->leases(0);
    saw_released |= l.lease_id().substr(0, released_class.size() + 1) == released_class + "/";
    auto reply = rules.ReportVerdicts(Verify(l, "honest", **prover, kSize));
    ASSERT_TRUE(reply.ok()) << reply.status();
    ASSERT_TRUE(reply->accepted());
    ++reported;
  }
  EXPECT_TRUE(saw_released);
  EXPECT_EQ(reported, job.candidate_classes());
  rules.WaitForFinishes();
  auto done = store->GetJob("j");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), JOB_STATE_DONE);
  EXPECT_EQ(done->verification().classes_given_up(), 0) << "releases are not expiries";
}

}  // namespace
}  // namespace taso::rules_db
