// The extractors (greedy, DAG greedy, ILP) on e-graphs in egraph-serialize
// JSON, each checked against the optimum found by trying every choice.
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "optimizer/eqsat/egraph_json.h"
#include "optimizer/eqsat/extract.h"

namespace taso::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string TestFile(const std::string& name) {
  const char* dir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return std::string(dir ? dir : ".") + "/" + (workspace ? workspace : "_main") + "/optimizer/eqsat/testdata/" + name;
}

// The least DAG cost over every choice of one e-node per class whose picks
// the roots reach without a cycle (+infinity when there is none).
double BruteForceOptimum(const ExtractionProblem& p) {
  const int classes = static_cast<int>(p.class_id.size());
  std::vector<int> index(classes, 0);  // per class: which of its e-nodes (class_nodes.size() means none)
  double best = kInf;
  while (true) {
    std::vector<int> pick(classes, -1);
    for (int c = 0; c < classes; ++c) {
      if (index[c] < static_cast<int>(p.class_nodes[c].size())) pick[c] = p.class_nodes[c][index[c]];
    }
    // Reach from the roots; 0 unseen, 1 on the path, 2 done.
    std::vector<int> state(classes, 0);
    std::vector<bool> used(p.node_id.size(), false);
    bool ok = true;
    std::function<void(int)> visit = [&](int c) {
      if (!ok || state[c] == 2) return;
      if (state[c] == 1 || pick[c] < 0) {
        ok = false;
        return;
      }
      state[c] = 1;
      used[pick[c]] = true;
      for (int d : p.node_children[pick[c]]) visit(d);
      state[c] = 2;
    };
    for (int r : p.roots) visit(r);
    if (ok) {
      double cost = 0;
      for (size_t n = 0; n < used.size(); ++n) cost += used[n] ? p.node_cost[n] : 0;
      best = std::min(best, cost);
    }
    int c = 0;
    while (c < classes && ++index[c] > static_cast<int>(p.class_nodes[c].size())) index[c++] = 0;
    if (c == classes) return best;
  }
}

SerializedEGraph ReadTestFile() {
  auto g = ReadEGraphJson(TestFile("shared_operands.json"));
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : SerializedEGraph{};
}

TEST(EGraphJsonTest, ReadsNodesClassesRootsAndSkipsSubsumed) {
  const SerializedEGraph g = ReadTestFile();
  EXPECT_EQ(g.problem.class_id.size(), 9u);
  EXPECT_EQ(g.problem.node_id.size(), 13u);
  EXPECT_EQ(g.subsumed, 1);
  ASSERT_EQ(g.problem.roots.size(), 2u);
  EXPECT_EQ(g.class_name[g.problem.roots[0]], "R");
  EXPECT_EQ(g.class_name[g.problem.roots[1]], "Y");
  EXPECT_EQ(g.problem.class_label[g.problem.roots[0]], "f32[4]");
  // a2 reads x twice: one distinct operand, used twice.
  for (size_t n = 0; n < g.node_name.size(); ++n) {
    if (g.node_name[n] != "a2") continue;
    EXPECT_EQ(g.problem.node_children[n].size(), 1u);
    EXPECT_EQ(g.child_uses[n], std::vector<int>{2});
    EXPECT_EQ(g.problem.node_label[n], "leaf_a");
  }
}

// The file's costs are made so that each extractor does better than the one
// before: greedy counts the shared operand u twice and takes leaf_y (32);
// DAG greedy counts it once under k (30); only the ILP sees that r's two
// operands may share s when both switch at once (26, what trying every
// choice finds). s_via_a reads class A: through a1 a cycle, through a2 dearer.
TEST(ExtractorsTest, KnownOptimumOfTheSmallFile) {
  const SerializedEGraph g = ReadTestFile();
  const ExtractionProblem& p = g.problem;
  EXPECT_DOUBLE_EQ(BruteForceOptimum(p), 26);
  auto greedy = SolveGreedy(p);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  EXPECT_DOUBLE_EQ(greedy->cost_ms, 32);
  EXPECT_DOUBLE_EQ(TreeCost(p, greedy->pick, &g.child_uses), 32);
  auto dag = SolveGreedyDag(p);
  ASSERT_TRUE(dag.ok()) << dag.status();
  EXPECT_DOUBLE_EQ(dag->cost_ms, 30);
  EXPECT_FALSE(dag->kept_earlier);
  EXPECT_DOUBLE_EQ(TreeCost(p, dag->pick, &g.child_uses), 17 + 23);
  IlpStats stats;
  auto ilp = SolveIlp(p, absl::Seconds(20), nullptr, {}, &stats);
  ASSERT_TRUE(ilp.ok()) << ilp.status();
  EXPECT_DOUBLE_EQ(ilp->cost_ms, 26);
  EXPECT_TRUE(ilp->optimal) << stats.outcome;
  EXPECT_DOUBLE_EQ(TreeCost(p, ilp->pick, &g.child_uses), 23 + 23);
}

// The ILP runs in a child process by default (IlpSettings::isolate): the
// same choice and stats come back as when it runs here.
TEST(ExtractorsTest, IsolatedIlpGivesWhatTheInProcessIlpGives) {
  const SerializedEGraph g = ReadTestFile();
  IlpSettings here;
  here.isolate = false;
  IlpStats here_stats, child_stats;
  auto in_process = SolveIlp(g.problem, absl::Seconds(20), nullptr, here, &here_stats);
  auto isolated = SolveIlp(g.problem, absl::Seconds(20), nullptr, {}, &child_stats);
  ASSERT_TRUE(in_process.ok()) << in_process.status();
  ASSERT_TRUE(isolated.ok()) << isolated.status();
  EXPECT_EQ(isolated->pick, in_process->pick);
  EXPECT_DOUBLE_EQ(isolated->cost_ms, 26);
  EXPECT_EQ(isolated->optimal, in_process->optimal);
  EXPECT_DOUBLE_EQ(isolated->lower_bound_ms, in_process->lower_bound_ms);
  EXPECT_EQ(child_stats.outcome, here_stats.outcome);
  EXPECT_EQ(child_stats.columns, here_stats.columns);
  EXPECT_EQ(child_stats.rows, here_stats.rows);
}

// A child that runs out of its memory cap is an error for the caller (which
// keeps greedy's choice), not the end of this process.
TEST(ExtractorsTest, IlpChildOverItsMemoryCapIsAnError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator maps its heap up front, so an address-space cap does not bite";
#endif
  // A layered e-graph large enough that building the model needs megabytes.
  ExtractionProblem p;
  const int classes = 20000;
  p.class_nodes.resize(classes);
  for (int c = 0; c < classes; ++c) {
    p.class_id.push_back(c);
    for (int k = 0; k < 3; ++k) {
      const int n = static_cast<int>(p.node_id.size());
      p.node_id.push_back(n);
      p.node_class.push_back(c);
      p.node_cost.push_back(1 + (c * 7 + k * 3) % 5);
      p.node_children.push_back(c == 0 ? std::vector<int>{} : std::vector<int>{(c * 13 + k) % c, c - 1});
      std::sort(p.node_children.back().begin(), p.node_children.back().end());
      p.node_children.back().erase(std::unique(p.node_children.back().begin(), p.node_children.back().end()),
                                   p.node_children.back().end());
      p.class_nodes[c].push_back(n);
    }
  }
  p.roots = {classes - 1};
  IlpSettings starved;
  starved.child_memory_mb = 1;
  IlpStats stats;
  auto ilp = SolveIlp(p, absl::Seconds(20), nullptr, starved, &stats);
  ASSERT_FALSE(ilp.ok());
  EXPECT_EQ(ilp.status().code(), absl::StatusCode::kResourceExhausted) << ilp.status();
  EXPECT_NE(ilp.status().message().find("memory cap"), std::string::npos) << ilp.status();
}

TEST(ExtractorsTest, TreeCostOfAnIncompleteOrCyclicChoiceIsInfinite) {
  const SerializedEGraph g = ReadTestFile();
  std::vector<int> none(g.problem.class_id.size(), -1);
  EXPECT_EQ(TreeCost(g.problem, none), kInf);
}

TEST(EGraphJsonTest, WrittenAndReadBackGivesTheSameCosts) {
  const SerializedEGraph g = ReadTestFile();
  auto text = EGraphJson(g.problem);
  ASSERT_TRUE(text.ok()) << text.status();
  auto again = ParseEGraphJson(*text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->problem.node_id.size(), g.problem.node_id.size());
  EXPECT_EQ(again->problem.node_label, g.problem.node_label);
  for (auto solve : {+[](const ExtractionProblem& p) { return SolveGreedy(p); },
                     +[](const ExtractionProblem& p) { return SolveGreedyDag(p); },
                     +[](const ExtractionProblem& p) { return SolveIlp(p, absl::Seconds(20), nullptr); }}) {
    auto a = solve(g.problem);
    auto b = solve(again->problem);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_DOUBLE_EQ(a->cost_ms, b->cost_ms);
  }
}

TEST(EGraphJsonTest, WriterLeavesOutENodesThatCanNeverBeChosen) {
  ExtractionProblem p;
  p.class_id = {0, 1, 2};
  p.class_nodes = {{0, 1}, {}, {2}};
  p.node_id = {10, 11, 12};
  p.node_class = {0, 0, 2};
  p.node_cost = {1, 2, 3};
  p.node_children = {{1}, {2}, {}};  // e-node 10 reads class 1, which has none
  p.roots = {0};
  auto text = EGraphJson(p);
  ASSERT_TRUE(text.ok()) << text.status();
  auto back = ParseEGraphJson(*text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node_name, (std::vector<std::string>{"11", "12"}));
  p.node_children[1] = {1};  // now no e-node of the root is writable
  EXPECT_EQ(EGraphJson(p).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EGraphJsonTest, BadFilesGetErrorsThatSayWhatIsWrong) {
  struct Case {
    std::string text, says;
  };
  const std::string ok_node = R"("a": {"op": "a", "children": [], "eclass": "A", "cost": 1})";
  const Case cases[] = {
      {"{nodes", "not valid JSON"},
      {"[]", "top level"},
      {R"({"root_eclasses": ["A"]})", "\"nodes\""},
      {R"({"nodes": {"a": 3}, "root_eclasses": ["A"]})", "e-node \"a\" is not an object"},
      {R"({"nodes": {"a": {"op": "a", "children": [], "cost": 1}}, "root_eclasses": ["A"]})", "\"eclass\""},
      {R"({"nodes": {"a": {"op": "a", "children": [], "eclass": "A"}}, "root_eclasses": ["A"]})", "\"cost\""},
      {R"({"nodes": {"a": {"op": "a", "children": [], "eclass": "A", "cost": -1}}, "root_eclasses": ["A"]})",
       ">= 0"},
      {R"({"nodes": {"a": {"op": "a", "children": ["zz"], "eclass": "A", "cost": 1}}, "root_eclasses": ["A"]})",
       "\"zz\", which is no e-node"},
      {R"({"nodes": {"a": {"op": "a", "children": [], "eclass": "A", "cost": 1, "subsumed": 1}},
           "root_eclasses": ["A"]})", "subsumed"},
      {"{\"nodes\": {" + ok_node + "}}", "root_eclasses"},
      {"{\"nodes\": {" + ok_node + "}, \"root_eclasses\": []}", "empty"},
      {"{\"nodes\": {" + ok_node + "}, \"root_eclasses\": [\"B\"]}", "root \"B\""},
  };
  for (const Case& c : cases) {
    auto g = ParseEGraphJson(c.text);
    ASSERT_FALSE(g.ok()) << c.text;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(g.status().message().find(c.says), std::string::npos) << g.status();
  }
  EGraphJsonLimits tiny;
  tiny.max_nodes = 0;
  EXPECT_EQ(ParseEGraphJson("{\"nodes\": {" + ok_node + "}, \"root_eclasses\": [\"A\"]}", tiny).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ReadEGraphJson(TestFile("no_such_file.json")).status().code(), absl::StatusCode::kNotFound);
}

// Random small e-graphs, cycles included: the ILP finds what trying every
// choice finds, and ILP <= DAG greedy <= greedy.
// The picked e-nodes' costs, each once (what a choice's cost_ms must be).
double PickCostOf(const ExtractionProblem& p, const std::vector<int>& pick) {
  double cost = 0;
  for (int n : pick) cost += n >= 0 ? p.node_cost[n] : 0;
  return cost;
}

// Adds an e-node of class `c`; returns its id.
int AddENode(ExtractionProblem& p, int c, double cost, std::vector<int> children) {
  const int n = static_cast<int>(p.node_id.size());
  p.node_id.push_back(n);
  p.node_class.push_back(c);
  p.node_cost.push_back(cost);
  p.node_children.push_back(std::move(children));
  p.class_nodes[c].push_back(n);
  return n;
}

TEST(ExtractorsTest, SharingMovesTakeAValueThatPaysOnlyWhenEveryReaderSwitches) {
  // Four outputs, each a product of its own input (cost 1), or a part of one
  // batched product of all four (cost 2.5, its parts free): the batch costs
  // more than any one product, so DAG greedy keeps the four (4); together
  // the parts cost 2.5.
  ExtractionProblem p;
  const int k = 4;
  p.class_nodes.resize(2 * k + 2);
  for (size_t c = 0; c < p.class_nodes.size(); ++c) p.class_id.push_back(static_cast<int>(c));
  const int stacked = 2 * k, batch = 2 * k + 1;
  std::vector<int> inputs;
  for (int i = 0; i < k; ++i) {
    AddENode(p, i, 0, {});
    inputs.push_back(i);
  }
  AddENode(p, stacked, 0.1, inputs);
  AddENode(p, batch, 2.4, {stacked});
  for (int i = 0; i < k; ++i) {
    AddENode(p, k + i, 1, {i});
    AddENode(p, k + i, 0, {batch});  // the part
    p.roots.push_back(k + i);
  }
  auto dag = SolveGreedyDag(p);
  ASSERT_TRUE(dag.ok()) << dag.status();
  EXPECT_NEAR(dag->cost_ms, 4, 1e-9);
  int moves = 0;
  const ProblemChoice shared = ImproveBySharing(p, *dag, absl::InfiniteFuture(), &moves);
  EXPECT_NEAR(shared.cost_ms, 2.5, 1e-9);
  EXPECT_NEAR(shared.cost_ms, BruteForceOptimum(p), 1e-9);
  EXPECT_EQ(moves, 1);
  for (int i = 0; i < k; ++i) EXPECT_EQ(p.node_children[shared.pick[k + i]], std::vector<int>{batch});
  // A deadline already past keeps the start.
  EXPECT_NEAR(ImproveBySharing(p, *dag, absl::InfinitePast()).cost_ms, 4, 1e-9);
}

TEST(ExtractorsTest, RandomEGraphsAgainstTryingEveryChoice) {
  std::mt19937 rng(7);
  int solvable = 0;
  for (int trial = 0; trial < 150; ++trial) {
    ExtractionProblem p;
    const int classes = 3 + static_cast<int>(rng() % 6);
    p.class_nodes.resize(classes);
    for (int c = 0; c < classes; ++c) {
      p.class_id.push_back(c);
      const int count = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < count; ++k) {
        const int n = static_cast<int>(p.node_id.size());
        std::vector<int> children;
        const int arity = c == 0 ? 0 : static_cast<int>(rng() % 3);
        for (int a = 0; a < arity; ++a) {
          // Mostly lower classes (a DAG), sometimes any class (cycles).
          children.push_back(rng() % 5 == 0 ? static_cast<int>(rng() % classes) : static_cast<int>(rng() % c));
        }
        std::sort(children.begin(), children.end());
        children.erase(std::unique(children.begin(), children.end()), children.end());
        p.node_id.push_back(n);
        p.node_class.push_back(c);
        p.node_cost.push_back(static_cast<double>(rng() % 10));
        p.node_children.push_back(children);
        p.class_nodes[c].push_back(n);
      }
    }
    p.roots = {classes - 1};
    if (rng() % 2) p.roots.push_back(classes - 2);
    const double optimum = BruteForceOptimum(p);
    auto greedy = SolveGreedy(p);
    auto dag = SolveGreedyDag(p);
    auto ilp = SolveIlp(p, absl::Seconds(20), nullptr);
    if (optimum == kInf) {
      EXPECT_FALSE(ilp.ok()) << "trial " << trial;
      continue;
    }
    ++solvable;
    // Greedy may miss an acyclic choice that exists (its per-class picks can
    // close a cycle); the ILP must not.
    ASSERT_TRUE(ilp.ok()) << "trial " << trial << ": " << ilp.status();
    EXPECT_NEAR(ilp->cost_ms, optimum, 1e-9) << "trial " << trial;
    EXPECT_TRUE(ilp->optimal) << "trial " << trial;
    if (greedy.ok()) {
      ASSERT_TRUE(dag.ok());
      EXPECT_LE(dag->cost_ms, greedy->cost_ms + 1e-9) << "trial " << trial;
      EXPECT_LE(ilp->cost_ms, dag->cost_ms + 1e-9) << "trial " << trial;
      // Sharing moves: a complete acyclic choice between DAG greedy's and the optimum.
      const ProblemChoice shared = ImproveBySharing(p, *dag);
      EXPECT_LE(shared.cost_ms, dag->cost_ms + 1e-9) << "trial " << trial;
      EXPECT_GE(shared.cost_ms, optimum - 1e-9) << "trial " << trial;
      EXPECT_LT(TreeCost(p, shared.pick), kInf) << "trial " << trial;
      EXPECT_NEAR(PickCostOf(p, shared.pick), shared.cost_ms, 1e-9) << "trial " << trial;
    }
  }
  EXPECT_GT(solvable, 50);
}

}  // namespace
}  // namespace taso::optimizer
