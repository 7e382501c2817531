#include "optimizer/served_rules.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "optimizer/rule_source.h"

namespace taso::optimizer {
namespace {

// A store whose finished jobs and rules the test sets.
struct FakeStore {
  absl::StatusOr<std::string> jobs = std::string();
  int proved = 0;
  int fetches = 0;
  int limit = 0;  // FetchRules' max_rules: more proved rules is ResourceExhausted

  ServedRules::StoreReader Reader() {
    return {[this] { return jobs; },
            [this]() -> absl::StatusOr<RuleSet> {
              ++fetches;
              if (limit > 0 && proved > limit) return absl::ResourceExhaustedError("more than the limit");
              RuleSet set;
              set.provenance.origin = RuleOrigin::kStore;
              set.provenance.location = "store:1";
              set.provenance.proved_rules = proved;
              set.provenance.digest = std::to_string(proved);
              return set;
            }};
  }
};

TEST(ServedRulesTest, ServesTheBuiltInSetUntilAJobFinishesThenItsRules) {
  FakeStore store;
  std::vector<std::string> log;
  auto served = ServedRules::FromStores(store.Reader(), absl::ZeroDuration(),
                                        [&](const std::string& line) { log.push_back(line); });
  ASSERT_TRUE(served.ok()) << served.status();
  auto builtin = LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok()) << builtin.status();
  EXPECT_GT(builtin->provenance.proved_rules, 1000);
  EXPECT_EQ((*served)->Current()->provenance.origin, RuleOrigin::kBuiltIn);
  EXPECT_EQ((*served)->Current()->provenance.digest, builtin->provenance.digest);
  EXPECT_EQ(store.fetches, 1);

  // A job finished: its rules are read once and served.
  store.jobs = std::string("store:1/job-a/100\n");
  store.proved = 7;
  std::shared_ptr<const RuleSet> now = (*served)->Current();
  EXPECT_EQ(now->provenance.origin, RuleOrigin::kStore);
  EXPECT_EQ(now->provenance.proved_rules, 7);
  EXPECT_EQ(store.fetches, 2);
  (*served)->Current();
  EXPECT_EQ(store.fetches, 2) << "unchanged jobs must not fetch the rules again";

  // A store that stops answering: the rules in hand stay, with a warning.
  store.jobs = absl::UnavailableError("store:1 is unreachable");
  EXPECT_EQ((*served)->Current()->provenance.proved_rules, 7);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("keeping the rules in hand"), std::string::npos) << log.back();
}

TEST(ServedRulesTest, LooksAtTheStoresNoMoreOftenThanAsked) {
  FakeStore store;
  auto served = ServedRules::FromStores(store.Reader(), absl::Hours(1), nullptr);
  ASSERT_TRUE(served.ok()) << served.status();
  store.jobs = std::string("store:1/job-a/100\n");
  store.proved = 3;
  EXPECT_EQ((*served)->Current()->provenance.origin, RuleOrigin::kBuiltIn);
  EXPECT_EQ(store.fetches, 1);
}

// An unpruned size-4 job (2.8M proved rules) is over the optimizer's limit:
// the built-in set is served, the stores are not read again until the jobs
// change, and the job's pruning (which changes them) brings its rules in.
TEST(ServedRulesTest, RulesOverTheLimitWaitForThePruningOfTheirJob) {
  FakeStore store;
  store.limit = 100;
  store.proved = 2'800'000;
  store.jobs = std::string("store:1/size4/100\n");
  std::vector<std::string> log;
  auto served = ServedRules::FromStores(store.Reader(), absl::ZeroDuration(),
                                        [&](const std::string& line) { log.push_back(line); });
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ((*served)->Current()->provenance.origin, RuleOrigin::kBuiltIn);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.front().find("serving the built-in set meanwhile"), std::string::npos) << log.front();
  (*served)->Current();
  EXPECT_EQ(store.fetches, 1) << "unchanged jobs over the limit must not be read again";

  store.jobs = std::string("store:1/size4/200\n");  // taso rules prune recorded its table
  store.proved = 93;
  EXPECT_EQ((*served)->Current()->provenance.proved_rules, 93);
  EXPECT_EQ(store.fetches, 2);

  // Over the limit again later: the rules in hand stay.
  store.jobs = std::string("store:1/size4/200\nstore:1/size5/300\n");
  store.proved = 5'000'000;
  EXPECT_EQ((*served)->Current()->provenance.proved_rules, 93);
  (*served)->Current();
  EXPECT_EQ(store.fetches, 3);
}

TEST(ServedRulesTest, AnUnreachableStoreAtStartIsAnError) {
  FakeStore store;
  store.jobs = absl::UnavailableError("down");
  auto served = ServedRules::FromStores(store.Reader(), absl::ZeroDuration(), nullptr);
  EXPECT_EQ(served.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace taso::optimizer
