// The merge under a multi-store read, over paged sources in memory: id
// order across sources, a rule on two sources once, one page per source
// read at a time, an early stop, and a source out of order refused. And
// which jobs a reader must prune itself.
#include "cluster/shard_rules.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace taso::cluster {
namespace {

rules::Rule RuleWithId(const std::string& id) {
  rules::Rule r;
  r.set_id(id);
  return r;
}

// Source i's rules split into pages of `page` rules; counts the pages read.
struct PagedSources {
  std::vector<std::vector<std::string>> ids;
  size_t page = 2;
  std::vector<size_t> next;  // the next index of each source
  int pages_read = 0;

  PageReader Reader() {
    next.assign(ids.size(), 0);
    return [this](size_t i) -> absl::StatusOr<std::vector<rules::Rule>> {
      std::vector<rules::Rule> out;
      for (; next[i] < ids[i].size() && out.size() < page; ++next[i]) out.push_back(RuleWithId(ids[i][next[i]]));
      ++pages_read;
      return out;
    };
  }
};

std::vector<std::string> MergeAll(PagedSources& sources, absl::Status* status = nullptr, size_t stop_after = 0) {
  std::vector<std::string> seen;
  absl::Status s = MergeById(sources.ids.size(), sources.Reader(), [&](const rules::Rule& r) {
    seen.push_back(r.id());
    return stop_after == 0 || seen.size() < stop_after;
  });
  if (status) *status = s;
  return seen;
}

TEST(MergeByIdTest, InterleavesSourcesInIdOrderAndGivesASharedRuleOnce) {
  PagedSources sources{{{"a", "d", "e", "h"}, {"b", "d", "g"}, {}, {"c", "f"}}};
  absl::Status status;
  EXPECT_EQ(MergeAll(sources, &status), (std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g", "h"}));
  EXPECT_TRUE(status.ok()) << status;
}

TEST(MergeByIdTest, ReadsAPageOnlyWhenTheLastIsUsedUp) {
  PagedSources sources{{{"a", "b", "c", "d", "e", "f"}, {"x", "y", "z"}}};
  // The first three: one page of each source, and the second page of source 0.
  EXPECT_EQ(MergeAll(sources, nullptr, 3), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(sources.pages_read, 3);
}

TEST(MergeByIdTest, RefusesASourceOutOfIdOrder) {
  PagedSources sources{{{"a", "c", "b"}, {"d"}}};
  absl::Status status;
  MergeAll(sources, &status);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("gave rule b after c"), std::string::npos) << status;
}

TEST(MergeByIdTest, PassesOnAReadError) {
  absl::Status s = MergeById(
      2,
      [](size_t i) -> absl::StatusOr<std::vector<rules::Rule>> {
        if (i == 1) return absl::UnavailableError("store down");
        return std::vector<rules::Rule>{RuleWithId("a")};
      },
      [](const rules::Rule&) { return true; });
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
}

TEST(ShardJobsTest, OnlyJobsDoneEverywhereAndNotPrunedAsOneSetArePrunedByTheReader) {
  ShardJobs jobs;
  jobs.done = {"pruned", "unpruned", "other"};
  jobs.pruned_as_union["pruned"] = ReductionTable{};
  jobs.proved = {{"pruned", 100}, {"unpruned", 7}, {"other", 5}, {"running", 1000}};
  EXPECT_EQ(jobs.Unpruned(""), (std::vector<std::string>{"other", "unpruned"}));
  EXPECT_EQ(jobs.Unpruned("unpruned"), (std::vector<std::string>{"unpruned"}));
  EXPECT_TRUE(jobs.Unpruned("pruned").empty());
  EXPECT_TRUE(jobs.Unpruned("running").empty());
  EXPECT_EQ(jobs.UnprunedProved(""), 12);
  EXPECT_EQ(jobs.UnprunedProved("pruned"), 0);
}

}  // namespace
}  // namespace taso::cluster
