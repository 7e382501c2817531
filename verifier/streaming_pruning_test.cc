#include "verifier/streaming_pruning.h"

#include <map>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "verifier/random_rules.h"

namespace taso::verifier {
namespace {

// Rules kept as the stores keep them: by id, per source, with the
// checkpoint beside them. Commit can be made to fail after a number of
// calls, which is what a killed process leaves behind (the commits before it
// stored, nothing after).
class VectorSource : public PruneSource {
 public:
  explicit VectorSource(int sources) : rules_(sources), checkpoints_(sources) {}

  void Add(int source, const rules::Rule& rule) { rules_[source][rule.id()] = rule; }
  int source_count() const override { return static_cast<int>(rules_.size()); }
  absl::Status ForEach(int source, const std::function<absl::Status(const rules::Rule&)>& visit) override {
    for (const auto& [id, rule] : rules_[source]) {
      if (absl::Status s = visit(rule); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  absl::Status Fetch(int source, const std::vector<std::string>& ids, std::vector<rules::Rule>& out) override {
    std::lock_guard<std::mutex> lock(mu_);  // the pruner fetches beside its commits
    for (const std::string& id : ids) out.push_back(rules_[source].at(id));
    return absl::OkStatus();
  }
  absl::Status Commit(int source, const std::vector<rules::Rule>& changed, const std::string& checkpoint) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (commits_left_ == 0) return absl::AbortedError("killed");
    if (commits_left_ > 0) --commits_left_;
    for (const rules::Rule& r : changed) rules_[source][r.id()] = r;
    checkpoints_[source] = checkpoint;
    ++commits_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Checkpoint(int source) override { return checkpoints_[source]; }

  void KillAfterCommits(int n) { commits_left_ = n; }
  int commits() const { return commits_; }
  // id -> (status, detail) over every source.
  std::map<std::string, std::pair<int, std::string>> Statuses() const {
    std::map<std::string, std::pair<int, std::string>> out;
    for (const auto& source : rules_) {
      for (const auto& [id, r] : source) out[id] = {r.status(), r.status_detail()};
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::map<std::string, rules::Rule>> rules_;
  std::vector<std::string> checkpoints_;
  int commits_left_ = -1;  // -1: never fail
  int commits_ = 0;
};

// What PruneRules gives on the same rules, read in id order as a store
// reads them, after setting earlier pruned rules back to proved.
std::map<std::string, std::pair<int, std::string>> InMemory(std::vector<rules::Rule> rules, ReductionTable* table) {
  std::sort(rules.begin(), rules.end(), [](const rules::Rule& a, const rules::Rule& b) { return a.id() < b.id(); });
  for (rules::Rule& r : rules) {
    if (r.status() == rules::RULE_STATUS_PRUNED) {
      r.set_status(rules::RULE_STATUS_PROVED);
      r.clear_status_detail();
    }
  }
  *table = PruneRules(rules);
  std::map<std::string, std::pair<int, std::string>> out;
  for (const rules::Rule& r : rules) out[r.id()] = {r.status(), r.status_detail()};
  return out;
}

void ExpectSameTable(const ReductionTable& a, const ReductionTable& b) {
  EXPECT_EQ(a.proved, b.proved);
  EXPECT_EQ(a.after_renaming, b.after_renaming);
  EXPECT_EQ(a.after_common_subgraph, b.after_common_subgraph);
  EXPECT_EQ(a.pruned_renaming, b.pruned_renaming);
  EXPECT_EQ(a.pruned_subgraph, b.pruned_subgraph);
  EXPECT_EQ(a.pruned_supergraph, b.pruned_supergraph);
}

TEST(StreamingPruning, KeepsWhatPruneRulesKeepsOnRandomSetsAcrossSources) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::vector<rules::Rule> rules = RandomRules(seed).Make(300);
    ReductionTable expected_table;
    const auto expected = InMemory(rules, &expected_table);
    const int sources = 1 + static_cast<int>(seed % 3);
    VectorSource source(sources);
    for (size_t i = 0; i < rules.size(); ++i) source.Add(static_cast<int>(i % sources), rules[i]);
    StreamingPruneOptions options;
    options.batch_rules = 7 + seed;
    auto result = PruneStreaming(source, options);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(source.Statuses(), expected) << "seed " << seed;
    ExpectSameTable(result->table, expected_table);
    EXPECT_GT(expected_table.pruned_renaming, 0);
    EXPECT_GT(expected_table.pruned_subgraph + expected_table.pruned_supergraph, 0);
    EXPECT_EQ(result->resumed_at, 0);
  }
}

TEST(StreamingPruning, AKilledRunResumesFromItsCheckpointToTheSameResult) {
  std::vector<rules::Rule> rules = RandomRules(42).Make(400);
  ReductionTable expected_table;
  const auto expected = InMemory(rules, &expected_table);
  VectorSource source(2);
  for (size_t i = 0; i < rules.size(); ++i) source.Add(static_cast<int>(i % 2), rules[i]);
  StreamingPruneOptions options;
  options.batch_rules = 25;
  // Killed between the two sources' writes of the fourth batch: source 0 is
  // one batch ahead of source 1.
  source.KillAfterCommits(7);
  auto killed = PruneStreaming(source, options);
  ASSERT_FALSE(killed.ok());
  EXPECT_NE(source.Statuses(), expected);
  source.KillAfterCommits(-1);
  auto resumed = PruneStreaming(source, options);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->resumed_at, 3 * 25);
  EXPECT_EQ(source.Statuses(), expected);
  ExpectSameTable(resumed->table, expected_table);
  // Done: a third run only learns, and writes nothing.
  auto again = PruneStreaming(source, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->rules_written, 0);
  ExpectSameTable(again->table, expected_table);
}

TEST(StreamingPruning, ACheckpointForAnotherSetIsIgnored) {
  std::vector<rules::Rule> rules = RandomRules(7).Make(200);
  VectorSource source(1);
  for (const rules::Rule& r : rules) source.Add(0, r);
  ASSERT_TRUE(PruneStreaming(source).ok());
  // One more proved rule: the set changed, so the old checkpoint says nothing.
  std::vector<rules::Rule> more = RandomRules(8).Make(1);
  more[0].set_status(rules::RULE_STATUS_PROVED);
  source.Add(0, more[0]);
  rules.push_back(more[0]);
  ReductionTable expected_table;
  const auto expected = InMemory(rules, &expected_table);
  auto result = PruneStreaming(source);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->resumed_at, 0);
  EXPECT_EQ(source.Statuses(), expected);
}

TEST(StreamingPruning, AMemoryLimitTooSmallIsAnErrorThatSaysWhatToChange) {
  std::vector<rules::Rule> rules = RandomRules(3).Make(100);
  VectorSource source(1);
  for (const rules::Rule& r : rules) source.Add(0, r);
  StreamingPruneOptions options;
  options.memory_limit_mb = 1;
  options.batch_rules = 100;
  auto result = PruneStreaming(source, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(result.status().message().find("raise the memory limit"), std::string::npos) << result.status();
}

}  // namespace
}  // namespace taso::verifier
