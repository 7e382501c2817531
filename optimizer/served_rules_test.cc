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

  ServedRules::StoreReader Reader() {
    return {[this] { return jobs; },
            [this]() -> absl::StatusOr<RuleSet> {
              ++fetches;
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

TEST(ServedRulesTest, AnUnreachableStoreAtStartIsAnError) {
  FakeStore store;
  store.jobs = absl::UnavailableError("down");
  auto served = ServedRules::FromStores(store.Reader(), absl::ZeroDuration(), nullptr);
  EXPECT_EQ(served.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace taso::optimizer
